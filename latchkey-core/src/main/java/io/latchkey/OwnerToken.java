package io.latchkey;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * An explicit, unguessable owner identity that can be handed to other threads, async continuations
 * or other processes (an RPC callee) so that they re-enter and release the caller's locks. Like a
 * trace id, it travels as a string: {@link #value()} on one side, {@link #parse(String)} on the
 * other.
 *
 * <p>Whoever knows the token is the owner, so treat it like a credential.
 */
public final class OwnerToken {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern FORMAT = Pattern.compile("tok-[0-9a-f]{32}");
  // "tok-" and 6 hex digits: enough to tell tokens apart in a log, far from enough to guess one.
  private static final int SHOWN = 10;

  private final String value;

  private OwnerToken(String value) {
    this.value = value;
  }

  /**
   * @return a new token with 128 random bits
   */
  public static OwnerToken random() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return new OwnerToken("tok-" + HexFormat.of().formatHex(bytes));
  }

  /**
   * Reads a token received from another thread or process.
   *
   * @param value the output of {@link #value()}
   * @return the token
   * @throws IllegalArgumentException if {@code value} is not a token
   */
  public static OwnerToken parse(String value) {
    Objects.requireNonNull(value, "owner token must not be null");
    if (!FORMAT.matcher(value).matches()) {
      throw new IllegalArgumentException(
          "not an owner token (expected 'tok-' and 32 hex digits): '" + value + "'");
    }
    return new OwnerToken(value);
  }

  /**
   * @return the token as a string, to pass along
   */
  public String value() {
    return value;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof OwnerToken token && token.value.equals(value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  /** Shows only a prefix: the whole token is a credential and does not belong in logs. */
  @Override
  public String toString() {
    return "OwnerToken[" + masked(value) + "]";
  }

  /**
   * @param owner an owner id: a token's value, or a client id and thread
   * @return the owner id fit for logs: a token's value cut to its first characters, anything else
   *     as it is
   */
  static String masked(String owner) {
    return FORMAT.matcher(owner).matches() ? owner.substring(0, SHOWN) + "…" : owner;
  }
}
