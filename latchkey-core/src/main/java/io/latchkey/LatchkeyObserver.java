package io.latchkey;

/**
 * Hears what the engine does, for metrics and tracing: acquisitions and their waits, holds taken
 * and given back, leases lost, renewals. Set one with {@link
 * LatchkeyOptions.Builder#observer(LatchkeyObserver)}; the default, {@link #NONE}, does nothing and
 * costs nothing. {@code latchkey-micrometer} implements it with Micrometer meters and observations.
 *
 * <p><b>Threads: every method must return quickly and must not block.</b> Most events happen where
 * they are detected: {@link #acquireStarted} runs on the caller's thread (so that a tracer finds
 * the caller's current span), but the end of an acquisition, renewals and losses are reported on
 * the client's scheduler thread, which also runs every lease timer and the watchdog, or on a client
 * library's network thread. Handing them to another thread would cost a thread switch per acquire
 * and reorder the events of a hold; so, as for a {@code java.util.logging} handler: increment
 * counters, record timers, start and stop observations; never wait for I/O, take a contended lock
 * or call latchkey. An exception thrown by an observer is logged and dropped; it never changes the
 * outcome of the operation.
 *
 * <p>Names are given to {@link #acquireStarted} so that an observer may use them (e.g. in a trace
 * span); metrics should not tag by them, which would make one time series per lock name.
 */
public interface LatchkeyObserver {
  /** Observes nothing. */
  LatchkeyObserver NONE = new LatchkeyObserver() {};

  /**
   * An acquisition starts (a lock, a permit, or a latch's wait), on the caller's thread.
   *
   * @param primitive what is acquired
   * @param backend the backend's kind: the scheme of its URI, e.g. {@code redis} or {@code memory}
   * @param name the resource's name
   * @return what hears how this acquisition ends; {@link AcquireObservation#NONE} if nothing does
   */
  default AcquireObservation acquireStarted(Primitive primitive, String backend, String name) {
    return AcquireObservation.NONE;
  }

  /**
   * The number of holds this client has changed: {@code +1} when a lock hold or a leased permit was
   * granted, {@code -1} when one was given back (released, or its release failed: either way this
   * client no longer has it). A lost lease stays counted until its holder releases it.
   *
   * @param primitive what is held
   * @param backend the backend's kind
   * @param delta {@code +1} or {@code -1}
   */
  default void holdsChanged(Primitive primitive, String backend, int delta) {}

  /**
   * A lease was lost (it ran out without renewal, the backend forgot it or it was force-released),
   * reported once per grant.
   *
   * @param primitive what was held
   * @param backend the backend's kind
   */
  default void leaseLost(Primitive primitive, String backend) {}

  /**
   * The watchdog renewed leases.
   *
   * @param primitive what was renewed
   * @param backend the backend's kind
   * @param leases how many leases of that primitive one renewal call confirmed
   */
  default void renewed(Primitive primitive, String backend, int leases) {}

  /**
   * Renewals failed: the call failed, or the backend could not renew these leases. They stay valid
   * until their last confirmed lease runs out; a lease the backend no longer has is reported by
   * {@link #leaseLost} instead.
   *
   * @param primitive what was to be renewed
   * @param backend the backend's kind
   * @param leases how many leases of that primitive
   */
  default void renewalFailed(Primitive primitive, String backend, int leases) {}

  /**
   * How one acquisition goes. Exactly one of {@link #granted()}, {@link #timedOut()} and {@link
   * #failed(Throwable)} is called, once; {@link #waiting()} comes before it if the first attempt
   * found the resource taken. Same thread rules as the observer.
   */
  interface AcquireObservation {
    /** Hears nothing. */
    AcquireObservation NONE = new AcquireObservation() {};

    /** The first attempt found the resource taken: the acquisition waits from now on. */
    default void waiting() {}

    /** Acquired. */
    default void granted() {}

    /** The wait ran out (or a try that does not wait found the resource taken). */
    default void timedOut() {}

    /**
     * Ended without a grant for another reason: a backend error, a cancellation or an interrupt.
     *
     * @param failure what ended it
     */
    default void failed(Throwable failure) {}
  }
}
