package io.latchkey.spi;

/**
 * What a backend tells the engine about grants between calls: a connection or session in doubt, a
 * session or connection lost, a grant that vanished. The engine hands every backend one of these in
 * {@link BackendContext#events()}.
 *
 * <p>The states follow Curator's: <em>suspended</em> means the backend cannot tell whether a grant
 * is still held (its connection or session is in doubt); the engine reports the lease as not valid
 * until it is resumed or lost. <em>Resumed</em> means the doubt is over: the engine then confirms
 * each suspended grant with the backend (a {@link LatchkeyBackend#renew} of that grant, which
 * checks owner and fencing token) and only a confirmed grant becomes valid again; a grant the
 * backend no longer has is lost. <em>Lost</em> is final: listeners hear of it and the next release
 * throws {@link io.latchkey.LeaseLostException}.
 *
 * <p>Methods may be called from any thread, including a client library's network thread: they only
 * record the event and return at once; the engine runs user listeners on its own executor. Events
 * about grants the engine does not know (released already, never registered) are ignored.
 */
public interface GrantEvents {
  /** For backends and tests that report nothing. */
  GrantEvents NONE =
      new GrantEvents() {
        @Override
        public void lost(GrantRef grant, String reason) {}

        @Override
        public void suspended(GrantRef grant, String reason) {}

        @Override
        public void resumed(GrantRef grant) {}

        @Override
        public void allLost(String reason) {}

        @Override
        public void allSuspended(String reason) {}

        @Override
        public void allResumed() {}
      };

  /**
   * One grant is gone for good (its node was deleted, its connection closed).
   *
   * @param grant the grant
   * @param reason why, for the {@link io.latchkey.LeaseLostException}
   */
  void lost(GrantRef grant, String reason);

  /**
   * One grant is in doubt.
   *
   * @param grant the grant
   * @param reason why, for logs
   */
  void suspended(GrantRef grant, String reason);

  /**
   * The doubt about one grant is over; the engine confirms it before trusting it again.
   *
   * @param grant the grant
   */
  void resumed(GrantRef grant);

  /**
   * Every grant of this client is gone (a ZooKeeper session expired, the connection that held
   * advisory locks closed).
   *
   * @param reason why
   */
  void allLost(String reason);

  /**
   * Every grant of this client is in doubt (the connection dropped; the session may still live).
   *
   * @param reason why, for logs
   */
  void allSuspended(String reason);

  /** The doubt about every grant is over; the engine confirms each before trusting it again. */
  void allResumed();
}
