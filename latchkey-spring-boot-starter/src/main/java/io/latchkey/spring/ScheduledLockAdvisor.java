package io.latchkey.spring;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.ClassUtils;

/**
 * Runs {@link ScheduledLock @ScheduledLock} jobs on one instance at a time: one try of a mutex with
 * the lease {@code lockAtMostFor}; a run that ends before {@code lockAtLeastFor} leaves the release
 * to a timer of its own thread, which releases and runs nothing else.
 */
final class ScheduledLockAdvisor
    extends AnnotatedMethodAdvisor<ScheduledLock, ScheduledLockAdvisor.Job>
    implements DisposableBean {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ScheduledLockAdvisor.class);

  private final transient ObjectProvider<Latchkey> latchkey;
  private final transient ScheduledExecutorService delayedReleases;

  ScheduledLockAdvisor(ObjectProvider<Latchkey> latchkey) {
    super(ScheduledLock.class);
    this.latchkey = latchkey;
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "latchkey-scheduled-lock-release");
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
    this.delayedReleases = timer;
  }

  /** One checked job. */
  record Job(String name, Duration atMost, Duration atLeast) {}

  @Override
  Job check(Method method, ScheduledLock lock) {
    String where = "@ScheduledLock on " + ClassUtils.getQualifiedMethodName(method);
    if (method.getReturnType() != void.class) {
      throw new IllegalArgumentException(
          where + ": the job must return void (a skipped run has nothing to return)");
    }
    Duration atMost = Durations.parse(lock.lockAtMostFor(), where + ": lockAtMostFor");
    Duration atLeast = Durations.parse(lock.lockAtLeastFor(), where + ": lockAtLeastFor");
    if (atMost.isZero()) {
      throw new IllegalArgumentException(where + ": lockAtMostFor must be positive");
    }
    if (atLeast.compareTo(atMost) > 0) {
      throw new IllegalArgumentException(
          where
              + ": lockAtLeastFor ("
              + lock.lockAtLeastFor()
              + ") must not be longer than lockAtMostFor ("
              + lock.lockAtMostFor()
              + ")");
    }
    String name = lock.name().isBlank() ? ClassUtils.getQualifiedMethodName(method) : lock.name();
    return new Job(name, atMost, atLeast);
  }

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Job job = checkedFor(invocation);
    if (job == null) {
      return invocation.proceed();
    }
    long startedAt = System.nanoTime();
    // A mutex, not a reentrant lock: the next tick on this very thread must not re-enter a lock
    // kept for lockAtLeastFor.
    Optional<Lease> lease = tryLock(job);
    if (lease.isEmpty()) {
      LOG.debug("skipped a run of {}: another instance holds its lock", job.name());
      return null;
    }
    try {
      return invocation.proceed();
    } finally {
      release(lease.get(), job, startedAt);
    }
  }

  private Optional<Lease> tryLock(Job job) throws InterruptedException {
    try {
      return Optional.of(
          latchkey.getObject().mutex(job.name()).acquire(Duration.ZERO, job.atMost()));
    } catch (io.latchkey.LockTimeoutException taken) {
      return Optional.empty();
    }
  }

  private void release(Lease lease, Job job, long startedAt) {
    long keepNanos = job.atLeast().toNanos() - (System.nanoTime() - startedAt);
    if (keepNanos <= 0) {
      releaseLogged(lease, job);
      return;
    }
    // Its failure is logged by the task itself; on shutdown, closing the client releases it.
    var unused =
        delayedReleases.schedule(() -> releaseLogged(lease, job), keepNanos, TimeUnit.NANOSECONDS);
  }

  private static void releaseLogged(Lease lease, Job job) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      LOG.warn("releasing the lock of job {} failed: {}", job.name(), e.toString());
    }
  }

  @Override
  public void destroy() {
    delayedReleases.shutdownNow();
  }
}
