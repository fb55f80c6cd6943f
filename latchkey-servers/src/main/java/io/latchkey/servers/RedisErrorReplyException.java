package io.latchkey.servers;

/**
 * An error reply ({@code -ERR ...}, {@code -NOAUTH ...}, {@code -MOVED ...}) returned by a Redis
 * server to a command sent through {@link RedisTestServer#command(String...)}.
 *
 * <p>The message is the error text exactly as the server sent it, without the leading {@code -}.
 */
public final class RedisErrorReplyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception for the given error reply.
   *
   * @param reply the error text as the server sent it, without the leading {@code -}
   */
  public RedisErrorReplyException(String reply) {
    super(reply);
  }

  /**
   * Returns the error code: the first word of the reply, such as {@code ERR}, {@code NOAUTH},
   * {@code WRONGTYPE} or {@code MOVED}.
   *
   * @return the first word of the error reply, or the whole reply when it has no space
   */
  public String errorCode() {
    String reply = reply();
    int space = reply.indexOf(' ');
    return space < 0 ? reply : reply.substring(0, space);
  }

  /**
   * Returns the error text exactly as the server sent it.
   *
   * @return the error text, without the leading {@code -}
   */
  public String reply() {
    String message = getMessage();
    return message == null ? "" : message;
  }
}
