package io.latchkey.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method while holding a distributed lock of the application's {@link
 * io.latchkey.Latchkey} bean. The bean must be a Spring bean called through its proxy (as for
 * {@code @Transactional}): a call from inside the same object does not take the lock.
 *
 * <pre>{@code
 * @Locked(value = "orders/#{#order.id}", waitTime = "5s")
 * public void ship(Order order, Lease lease) {   // lease: the grant, filled in by latchkey
 *   warehouse.write(order, lease.fencingToken());
 * }
 * }</pre>
 *
 * <p><b>Name.</b> A template: literal text with SpEL expressions in {@code #{...}}, which see the
 * method's arguments by name ({@code #order}, compiled with {@code -parameters}) or by position
 * ({@code #p0}, {@code #a0}) and the application's beans ({@code @beanName}). Expressions are
 * parsed and their variables checked when the bean is created, so a typo fails the application's
 * start with a message naming the method.
 *
 * <p><b>Lease and fencing token.</b> A parameter of type {@link io.latchkey.Lease} receives the
 * grant (callers pass {@code null}); {@link CurrentLease#get()} gives it too, on the calling
 * thread. Without {@link #leaseTime()} the lease is kept alive by the watchdog for as long as the
 * method runs.
 *
 * <p><b>Asynchronous methods.</b> If the method returns a {@link
 * java.util.concurrent.CompletionStage} (e.g. {@code CompletableFuture}), the lock is held until
 * that stage completes, and the stage the caller gets completes only after the lock was released.
 * Reactive types ({@code Mono}, {@code Flux}) are refused at start-up rather than locked wrongly.
 *
 * <p><b>Outcome.</b> If the lock was not had within {@link #waitTime()}, the call throws {@link
 * io.latchkey.LockTimeoutException}, or with {@link OnNotAcquired#SKIP} returns without running the
 * method. If the lease was lost while the method ran, releasing it throws {@link
 * io.latchkey.LeaseLostException} (a failed stage for asynchronous methods), so that nobody takes
 * work done without the lock for work done under it.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {
  /**
   * @return the lock name template, e.g. {@code orders/#{#order.id}}
   */
  String value();

  /**
   * @return how long to wait for the lock: a duration such as {@code 10s}, {@code 500ms} or {@code
   *     PT1M}; {@code 0} tries once
   */
  String waitTime() default "30s";

  /**
   * @return an explicit lease (the lock frees itself after it, however long the method runs), or
   *     empty for a lease renewed by the watchdog while the method runs
   */
  String leaseTime() default "";

  /**
   * @return which kind of lock
   */
  Mode mode() default Mode.LOCK;

  /**
   * @return what to do when the lock was not had in time
   */
  OnNotAcquired onNotAcquired() default OnNotAcquired.THROW;

  /** The kinds of lock a method can hold. */
  enum Mode {
    /** A reentrant lock ({@link io.latchkey.Latchkey#lock(String)}). */
    LOCK,
    /** A reentrant lock served first come, first served. */
    FAIR,
    /** A non-reentrant mutex: a nested call on the same name waits (and may time out). */
    MUTEX,
    /** The read side of a read-write lock: readers share it. */
    READ,
    /** The write side of a read-write lock. */
    WRITE
  }

  /** What a call does when the lock was not had in time. */
  enum OnNotAcquired {
    /** Throw {@link io.latchkey.LockTimeoutException}. */
    THROW,
    /**
     * Do not run the method: return {@code null}, an empty {@code Optional}, or a stage completed
     * with {@code null}. Not allowed on methods returning a primitive.
     */
    SKIP
  }
}
