package io.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * Every blocking acquire, release, await and count-down of the public API has an asynchronous
 * sibling with the same parameters, named {@code <name>Async} and returning a {@link
 * CompletionStage}: the flavours cannot drift apart.
 */
class AsyncFormsTest {
  private static final Set<String> BLOCKING =
      Set.of(
          "acquire",
          "release",
          "releaseIfExists",
          "unlock",
          "await",
          "countDown",
          "updateLeaseTime");

  @Test
  void everyBlockingOperationHasAnAsyncForm() {
    List<String> missing = new ArrayList<>();
    for (Class<?> type :
        List.of(
            DistributedLock.class,
            DistributedMutex.class,
            DistributedSemaphore.class,
            LeasedSemaphore.class,
            DistributedCountDownLatch.class,
            Lease.class,
            MultiLock.class,
            MultiLease.class)) {
      for (Method method : type.getMethods()) {
        if (!BLOCKING.contains(method.getName())) {
          continue;
        }
        try {
          Method async = type.getMethod(method.getName() + "Async", method.getParameterTypes());
          if (!CompletionStage.class.isAssignableFrom(async.getReturnType())) {
            missing.add(async + " does not return a CompletionStage");
          }
        } catch (NoSuchMethodException e) {
          missing.add(type.getSimpleName() + "." + method.getName() + "Async" + signature(method));
        }
      }
    }
    assertThat(missing).isEmpty();
  }

  private static String signature(Method method) {
    List<String> parameters = new ArrayList<>();
    for (Class<?> parameter : method.getParameterTypes()) {
      parameters.add(parameter.getSimpleName());
    }
    return "(" + String.join(", ", parameters) + ")";
  }
}
