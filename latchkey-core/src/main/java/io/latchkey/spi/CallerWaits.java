package io.latchkey.spi;

/**
 * Tells a backend on a synchronous client library that the thread calling it will wait, blocked,
 * for the answer of the operation it starts: the blocking forms of the API ({@code lock()}, {@code
 * unlock()}) start their operation between {@link #begin} and {@link #end}. Such a backend may then
 * run that operation on the calling thread instead of handing it to {@link
 * BackendContext#blockingExecutor()} and waking the caller once done (two thread hand-offs fewer
 * per operation), and answer with a completed stage.
 *
 * <p>The answer is given once per blocking call ({@link #take}): the first backend operation that
 * asks is the caller's own, and whatever else runs on the thread in its wake goes to the executor
 * as before. A backend that runs an operation on the calling thread must keep it within the
 * operation timeout itself (a network timeout of the time left): the engine puts no deadline on an
 * answer that is already there. Never true on the engine's own threads (its scheduler, the
 * watchdog), which never call {@link #begin}.
 */
public final class CallerWaits {
  // One flag per thread, kept between calls: a cycle allocates nothing here.
  private static final ThreadLocal<boolean[]> WAITING =
      ThreadLocal.withInitial(() -> new boolean[1]);

  private CallerWaits() {}

  /**
   * For the engine: the calling thread starts an operation whose answer it waits for, blocked.
   * Always followed by {@link #end}, in a {@code finally}.
   */
  public static void begin() {
    WAITING.get()[0] = true;
  }

  /** For the engine: the operation started since {@link #begin} is on its way. */
  public static void end() {
    decline();
  }

  /**
   * For a backend that passes an operation on to several others (a quorum's members): none of them
   * may run it on the calling thread, since one that did would hold back the calls to the others
   * until it is done (up to the operation timeout, if its server hangs). Call before passing the
   * operation on.
   */
  public static void decline() {
    WAITING.get()[0] = false;
  }

  /**
   * Whether the operation the calling thread is starting is one its caller waits for, blocked, and
   * the thread not interrupted; true at most once per {@link #begin}.
   *
   * @return true if the backend may run the operation on this thread
   */
  public static boolean take() {
    boolean[] waiting = WAITING.get();
    if (!waiting[0]) {
      return false;
    }
    waiting[0] = false;
    return !Thread.currentThread().isInterrupted();
  }
}
