package io.latchkey.testkit.faults;

/** The faults a {@link FaultRun} injects. */
public enum FaultKind {
  /** SIGSTOP the worker in the critical section for longer than its lease, then SIGCONT it. */
  PAUSE_HOLDER(false),
  /** SIGKILL a worker (the holder if there is one) and start a replacement. */
  KILL_WORKER(false),
  /** Stop the holder's network: its proxy holds every byte for a while, then lets them through. */
  FREEZE_CONNECTION(false),
  /** Reset the holder's connections to the server (the client reconnects). */
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
