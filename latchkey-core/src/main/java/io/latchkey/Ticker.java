package io.latchkey;

/**
 * A source of monotonic nanoseconds, injected so that lease and watchdog logic can be tested
 * without waiting. Only differences between two readings mean anything.
 */
@FunctionalInterface
public interface Ticker {
  /**
   * @return the current reading, in nanoseconds
   */
  long nanoTime();

  /**
   * @return the JVM's monotonic clock ({@link System#nanoTime()})
   */
  static Ticker system() {
    return System::nanoTime;
  }
}
