package io.latchkey.spi;

import java.util.function.Supplier;

/**
 * Tells a backend that the acquire attempt the calling thread starts belongs to a wait: the caller
 * asked to wait (a wait time above zero, or none), and the engine tries again, within that wait,
 * after an answer that refuses. A lock's attempt says so itself ({@link
 * LockRequest#queueKeepAliveMillis()} above zero); the attempts of the other primitives carry no
 * such field, so the engine marks them here: a semaphore's {@link SemaphoreStore#tryAcquire}, a
 * leased semaphore's {@link LeasedSemaphoreStore#tryAcquire} and {@link
 * LeasedSemaphoreStore#tryAcquireWithLease}, and a count-down latch's {@link LatchStore#count}
 * while its caller awaits zero.
 *
 * <p>What a backend may do with it: an attempt it cannot make for a while, for a reason that the
 * wait may safely outlast (a ZooKeeper connection that is down while its session lives), may be
 * answered as a refusal instead of a failure (busy until the connection is back; {@code false}; a
 * count above zero), so that the engine tries again within the wait, and the wait ends with its
 * normal timeout answer if the reason outlasts it. A try that does not wait is never marked: it
 * fails as every other call does, since a refusal would claim that nothing is free.
 *
 * <p>The answer is given once per marked attempt ({@link #take}): the first backend operation that
 * asks is the attempt's own, and whatever else runs on the thread in its wake is not marked.
 */
public final class WaitingAttempts {
  // One flag per thread, kept between calls: an attempt allocates nothing here.
  private static final ThreadLocal<boolean[]> WAITING =
      ThreadLocal.withInitial(() -> new boolean[1]);

  private WaitingAttempts() {}

  /**
   * For the engine: starts one attempt, marked as one of a wait if {@code waiting}.
   *
   * @param waiting whether the attempt belongs to a wait
   * @param attempt starts the attempt (the backend call is made on this thread, before it returns)
   * @return what {@code attempt} returned
   */
  public static <T> T start(boolean waiting, Supplier<T> attempt) {
    boolean[] flag = WAITING.get();
    boolean outer = flag[0];
    flag[0] = waiting;
    try {
      return attempt.get();
    } finally {
      flag[0] = outer;
    }
  }

  /**
   * Whether the attempt the calling thread is starting belongs to a wait; true at most once per
   * marked attempt.
   *
   * @return true if the backend may answer it with a refusal while it cannot make it
   */
  public static boolean take() {
    boolean[] flag = WAITING.get();
    boolean waiting = flag[0];
    flag[0] = false;
    return waiting;
  }
}
