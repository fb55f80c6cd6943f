package io.latchkey;

/**
 * Hears what happens to a {@link Lease} after it was granted. Every method has an empty default, so
 * a listener implements only what it cares about. Listeners run on the client's {@linkplain
 * LatchkeyOptions#callbackExecutor() callback executor}, never on latchkey's own threads, and a
 * normal release calls none of them.
 *
 * <p>The states follow Curator's connection states: <em>suspended</em> means the backend cannot
 * tell whether the grant is still held (its connection or session is in doubt) and the lease is not
 * valid meanwhile: stop acting as the holder; <em>resumed</em> means the backend confirmed the very
 * same grant (same fencing token) and the lease is valid again; <em>lost</em> is final.
 */
public interface LeaseListener {
  /**
   * The lease is in doubt and not valid until resumed or lost.
   *
   * @param reason why, for logs
   */
  default void suspended(String reason) {}

  /** The backend confirmed the grant after a suspension: the lease is valid again. */
  default void resumed() {}

  /**
   * The lease is lost for good; the next release throws {@code reason}.
   *
   * @param reason what happened
   */
  default void lost(LeaseLostException reason) {}
}
