package io.latchkey.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Put beside {@code @Scheduled}: each run of the job first tries a distributed mutex named {@link
 * #name()}, without waiting; the instance that gets it runs the job, every other instance skips
 * that run. So with several instances of the application, each tick runs once.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @ScheduledLock(name = "reports/daily", lockAtMostFor = "10m", lockAtLeastFor = "30s")
 * public void sendReports() { ... }
 * }</pre>
 *
 * <p>{@link #lockAtMostFor()} is the lease: if the instance dies or hangs, the others may run the
 * job again after it. It must be longer than the job ever runs; there is no watchdog, on purpose,
 * so that a stuck job cannot block the others for ever. {@link #lockAtLeastFor()} keeps the lock
 * after a quick run, so that an instance whose clock or scheduler is a little late does not run the
 * same tick again: the lock is released at the start plus that time (or at once if the job ran
 * longer). A process that stops meanwhile leaves the lock until {@code lockAtMostFor} runs out.
 *
 * <p>The method must return {@code void}. Needs a backend with explicit lease times ({@link
 * io.latchkey.Feature#LEASE_TIME}).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ScheduledLock {
  /**
   * @return the lock name; by default the class and method name
   */
  String name() default "";

  /**
   * @return the longest the lock is held, e.g. {@code 10m}
   */
  String lockAtMostFor();

  /**
   * @return the shortest the lock is held, e.g. {@code 30s}; at most {@link #lockAtMostFor()}
   */
  String lockAtLeastFor() default "0s";
}
