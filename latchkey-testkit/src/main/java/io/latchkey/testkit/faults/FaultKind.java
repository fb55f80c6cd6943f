package io.latchkey.testkit.faults;

/** The faults a {@link FaultRun} injects. */
public enum FaultKind {
  /** SIGSTOP the worker in the critical section for longer than its lease, then SIGCONT it. */
  PAUSE_HOLDER(false),
  /**
   * SIGSTOP a worker while it (one of its threads) waits for the lock, longer than a lease, then
   * SIGCONT it: a grant made meanwhile reaches it late. With several threads per worker, another of
   * its threads may hold the lock then.
   */
  PAUSE_WAITER(false),
  /** SIGKILL a worker (the holder if there is one) and start a replacement. */
  KILL_WORKER(false),
  /**
   * Stop a worker's network (the holder's, or a worker's whatever it does): its proxy holds every
   * byte, or only the server's replies, for a while, then lets them through or cuts the
   * connections.
   */
  FREEZE_CONNECTION(false),
  /** Reset a worker's connections to the server (the holder's, or any); the client reconnects. */
  CUT_CONNECTION(false),
  /** Crash the server ({@link ServerControl#crash()}) and start it again: its data is lost. */
  CRASH_SERVER(true),
  /** Make the server hold every client's commands for a while ({@link ServerControl#pause}). */
  PAUSE_SERVER(true);

  private final boolean serverFault;

  FaultKind(boolean serverFault) {
    this.serverFault = serverFault;
  }

  /**
   * @return true if the fault needs the backend's {@link ServerControl}
   */
  public boolean serverFault() {
    return serverFault;
  }
}
