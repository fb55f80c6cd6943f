package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;

/**
 * One RESP2 connection to a loopback Redis port: just enough protocol for the test servers to set
 * themselves up and for tests to inspect them.
 *
 * <p>Replies map to Java as: simple and bulk strings to {@link String} (bulk strings decoded as
 * UTF-8), integers to {@link Long}, arrays to an unmodifiable {@link List}, null bulk strings and
 * null arrays to {@code null}. A top-level error reply is thrown as {@link
 * RedisErrorReplyException}; an error nested in an array (as {@code EXEC} can return) becomes a
 * {@link RedisErrorReplyException} element of the list. RESP3 is not supported: a {@code HELLO 3}
 * sent through here makes later replies fail to parse.
 *
 * <p>Not thread-safe; one caller uses a connection and closes it.
 */
final class RespConnection implements Closeable {
  private static final int CONNECT_TIMEOUT_MILLIS = 1_000;
  private static final int MAX_LINE_BYTES = 1 << 20;

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private RespConnection(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream());
    this.out = new BufferedOutputStream(socket.getOutputStream());
  }

  /**
   * Connects to {@code 127.0.0.1:port}, authenticating with the default user when a password is
   * given.
   */
  static RespConnection open(int port, @Nullable String password, Duration readTimeout)
      throws IOException {
    return open(port, password, readTimeout, null);
  }

  /**
   * Connects to {@code 127.0.0.1:port}, over TLS when a socket factory is given (verifying that the
   * server's certificate is for {@code 127.0.0.1}; the handshake is bounded by the read timeout),
   * and authenticates with the default user when a password is given.
   */
  static RespConnection open(
      int port, @Nullable String password, Duration readTimeout, @Nullable SSLSocketFactory tls)
      throws IOException {
    Socket socket = new Socket();
    try {
      int timeoutMillis = Math.toIntExact(Math.max(1, readTimeout.toMillis()));
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(timeoutMillis);
      socket.connect(
          new InetSocketAddress(InetAddress.getLoopbackAddress(), port), CONNECT_TIMEOUT_MILLIS);
      if (tls != null) {
        SSLSocket secure =
            (SSLSocket)
                tls.createSocket(
                    socket, InetAddress.getLoopbackAddress().getHostAddress(), port, true);
        socket = secure;
        SSLParameters parameters = secure.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        secure.setSSLParameters(parameters);
        secure.setSoTimeout(timeoutMillis);
        secure.startHandshake();
      }
      RespConnection connection = new RespConnection(socket);
      if (password != null) {
        connection.call(List.of("AUTH", password));
      }
      return connection;
    } catch (IOException | RuntimeException e) {
      closeQuietly(socket);
      throw e;
    }
  }

  /** Sends one command and returns its parsed reply. */
  @Nullable Object call(List<String> args) throws IOException {
    if (args.isEmpty()) {
      throw new IllegalArgumentException("a command needs at least its name");
    }
    writeArray(args);
    out.flush();
    Object reply = readReply();
    if (reply instanceof RedisErrorReplyException error) {
      throw error;
    }
    return reply;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  private void writeArray(List<String> args) throws IOException {
    out.write(('*' + Integer.toString(args.size()) + "\r\n").getBytes(UTF_8));
    for (String arg : args) {
      byte[] bytes = arg.getBytes(UTF_8);
      out.write(('$' + Integer.toString(bytes.length) + "\r\n").getBytes(UTF_8));
      out.write(bytes);
      out.write('\r');
      out.write('\n');
    }
  }

  /** Reads one reply; an error reply is returned (not thrown) so arrays can hold it. */
  private @Nullable Object readReply() throws IOException {
    int type = in.read();
    if (type == -1) {
      throw new EOFException("connection closed by the server");
    }
    String line = readLine();
    return switch (type) {
      case '+' -> line;
      case '-' -> new RedisErrorReplyException(line);
      case ':' -> Long.valueOf(parseLong(line));
      case '$' -> readBulk(line);
      case '*' -> readArray(line);
      default ->
          throw new IOException(
              "unsupported RESP reply type '"
                  + (char) type
                  + "' (only RESP2 is supported): "
                  + line);
    };
  }

  private @Nullable String readBulk(String header) throws IOException {
    long length = parseLong(header);
    if (length < 0) {
      return null;
    }
    byte[] bytes = in.readNBytes(Math.toIntExact(length));
    if (bytes.length != length) {
      throw new EOFException("connection closed inside a bulk string");
    }
    if (in.read() != '\r' || in.read() != '\n') {
      throw new IOException("bulk string not terminated by CRLF");
    }
    return new String(bytes, UTF_8);
  }

  private @Nullable List<@Nullable Object> readArray(String header) throws IOException {
    long size = parseLong(header);
    if (size < 0) {
      return null;
    }
    List<@Nullable Object> elements = new ArrayList<>(Math.toIntExact(size));
    for (long i = 0; i < size; i++) {
      elements.add(readReply());
    }
    return Collections.unmodifiableList(elements);
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(64);
    while (line.size() <= MAX_LINE_BYTES) {
      int b = in.read();
      if (b == -1) {
        throw new EOFException("connection closed inside a reply line");
      }
      if (b == '\r') {
        if (in.read() != '\n') {
          throw new IOException("reply line not terminated by CRLF");
        }
        return line.toString(UTF_8);
      }
      line.write(b);
    }
    throw new IOException("reply line longer than " + MAX_LINE_BYTES + " bytes");
  }

  private static long parseLong(String text) throws IOException {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new IOException("malformed RESP number: " + text, e);
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // Nothing useful to do: the connection is being abandoned anyway.
    }
  }
}
