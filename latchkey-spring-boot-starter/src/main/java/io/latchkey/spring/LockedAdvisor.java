package io.latchkey.spring;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseSource;
import io.latchkey.LockTimeoutException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.ClassUtils;

/**
 * Runs {@link Locked @Locked} methods under their lock. The pointcut reads and checks each
 * annotated method when its bean is proxied (the name template, the durations, the return type and
 * the {@link Lease} parameter), so that mistakes stop the application's start; a call then only
 * evaluates the name.
 *
 * <p>Release. A synchronous method's lease is released when it returns or throws. A method that
 * returns a {@link CompletionStage} keeps its lease until that stage completes; the caller gets a
 * stage that completes after the release, with the method's outcome, or with the loss if the lease
 * was lost meanwhile. The release runs on the thread that completed the stage (or latchkey's
 * callback executor), never on latchkey's scheduler.
 */
final class LockedAdvisor extends AnnotatedMethodAdvisor<Locked, LockedAdvisor.LockedMethod> {
  private static final long serialVersionUID = 1L;

  private final transient ObjectProvider<Latchkey> latchkey;
  private final transient @Nullable BeanFactory beans;

  LockedAdvisor(ObjectProvider<Latchkey> latchkey, @Nullable BeanFactory beans) {
    super(Locked.class);
    this.latchkey = latchkey;
    this.beans = beans;
  }

  /** One checked {@code @Locked} method. */
  record LockedMethod(
      Locked locked,
      LockNameTemplate name,
      Duration waitTime,
      @Nullable Duration leaseTime,
      int leaseParameter,
      boolean async,
      Class<?> returns) {}

  @Override
  LockedMethod check(Method method, Locked locked) {
    String where =
        "@Locked on "
            + ClassUtils.getQualifiedMethodName(method)
            + "("
            + String.join(
                ", ",
                java.util.Arrays.stream(method.getParameterTypes())
                    .map(Class::getSimpleName)
                    .toList())
            + ")";
    Class<?> returns = method.getReturnType();
    if (isReactive(returns)) {
      throw new IllegalArgumentException(
          where
              + ": reactive return types are not supported (the lock would be released before"
              + " the publisher runs); return a CompletionStage, or lock inside the pipeline");
    }
    if (locked.onNotAcquired() == Locked.OnNotAcquired.SKIP
        && returns.isPrimitive()
        && returns != void.class) {
      throw new IllegalArgumentException(
          where + ": onNotAcquired = SKIP needs a method that can return null, not " + returns);
    }
    int leaseParameter = -1;
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      if (types[i] == Lease.class) {
        if (leaseParameter >= 0) {
          throw new IllegalArgumentException(where + ": more than one Lease parameter");
        }
        leaseParameter = i;
      }
    }
    Duration waitTime = Durations.parse(locked.waitTime(), where + ": waitTime");
    Duration leaseTime =
        locked.leaseTime().isBlank()
            ? null
            : Durations.parse(locked.leaseTime(), where + ": leaseTime");
    if (leaseTime != null && leaseTime.isZero()) {
      throw new IllegalArgumentException(where + ": leaseTime must be positive");
    }
    return new LockedMethod(
        locked,
        LockNameTemplate.parse(locked.value(), method, where),
        waitTime,
        leaseTime,
        leaseParameter,
        CompletionStage.class.isAssignableFrom(returns),
        returns);
  }

  private static boolean isReactive(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : ClassUtils.getAllInterfacesForClassAsSet(c)) {
        if (i.getName().equals("org.reactivestreams.Publisher")) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    LockedMethod locked = checkedFor(invocation);
    if (locked == null || target == null) {
      return invocation.proceed();
    }
    String name = locked.name().evaluate(target, invocation.getArguments(), beans);
    Lease lease;
    try {
      LeaseSource source = source(locked.locked().mode(), name);
      Duration leaseTime = locked.leaseTime();
      lease =
          leaseTime == null
              ? source.acquire(locked.waitTime())
              : source.acquire(locked.waitTime(), leaseTime);
    } catch (LockTimeoutException notHad) {
      if (locked.locked().onNotAcquired() == Locked.OnNotAcquired.SKIP) {
        return skipped(locked.returns());
      }
      throw notHad;
    }
    if (locked.leaseParameter() >= 0) {
      invocation.getArguments()[locked.leaseParameter()] = lease;
    }
    Object result;
    CurrentLease.push(lease);
    try {
      result = invocation.proceed();
    } catch (Throwable failure) {
      releaseAfterFailure(lease, failure);
      throw failure;
    } finally {
      CurrentLease.pop();
    }
    if (locked.async() && result instanceof CompletionStage<?> stage) {
      if (locked.returns().isAssignableFrom(CompletableFuture.class)) {
        return releasedWhenDone(stage, lease);
      }
      // A stage type of its own: it is handed back as it is, and the lease goes when it completes.
      var unused = releasedWhenDone(stage, lease);
      return result;
    }
    lease.release();
    return result;
  }

  private LeaseSource source(Locked.Mode mode, String name) {
    Latchkey client = latchkey.getObject();
    return switch (mode) {
      case LOCK -> client.lock(name);
      case FAIR -> client.fairLock(name);
      case MUTEX -> client.mutex(name);
      case READ -> client.readWriteLock(name).readLock();
      case WRITE -> client.readWriteLock(name).writeLock();
    };
  }

  private static @Nullable Object skipped(Class<?> returns) {
    if (returns == Optional.class) {
      return Optional.empty();
    }
    if (CompletionStage.class.isAssignableFrom(returns)) {
      return CompletableFuture.completedFuture(null);
    }
    return null;
  }

  /** The method failed: release, and keep a release failure beside the method's own. */
  private static void releaseAfterFailure(Lease lease, Throwable failure) {
    try {
      lease.release();
    } catch (RuntimeException releaseFailed) {
      failure.addSuppressed(releaseFailed);
    }
  }

  @SuppressWarnings("FutureReturnValueIgnored") // the handlers complete the caller's stage
  private static CompletableFuture<@Nullable Object> releasedWhenDone(
      CompletionStage<?> stage, Lease lease) {
    CompletableFuture<@Nullable Object> out = new CompletableFuture<>();
    stage.whenComplete(
        (value, failure) ->
            lease
                .releaseAsync()
                .whenComplete(
                    (released, releaseFailure) -> {
                      if (failure != null) {
                        if (releaseFailure != null) {
                          failure.addSuppressed(releaseFailure);
                        }
                        out.completeExceptionally(failure);
                      } else if (releaseFailure != null) {
                        out.completeExceptionally(releaseFailure);
                      } else {
                        out.complete(value);
                      }
                    }));
    return out;
  }
}
