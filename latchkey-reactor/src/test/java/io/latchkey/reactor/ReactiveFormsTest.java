package io.latchkey.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedMutex;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Every asynchronous operation of latchkey's API ({@code <name>Async}, returning a {@link
 * CompletionStage}) has a Reactor form: a method {@code <name>} with the same parameters returning
 * a {@link Mono}, on the type that {@link Reactive#of} makes of it, or (for leases) a static method
 * of {@link Reactive} taking the lease first. So the reactive flavour cannot fall behind the async
 * one.
 */
class ReactiveFormsTest {
  private static final Map<Class<?>, Class<?>> FORMS =
      Map.of(
          DistributedLock.class, ReactiveLock.class,
          DistributedMutex.class, ReactiveLeaseSource.class,
          LeasedSemaphore.class, ReactiveLeasedSemaphore.class,
          DistributedSemaphore.class, ReactiveSemaphore.class,
          DistributedCountDownLatch.class, ReactiveCountDownLatch.class,
          MultiLock.class, ReactiveMultiLock.class,
          Lease.class, Reactive.class,
          MultiLease.class, Reactive.class);

  @Test
  void everyAsyncOperationHasAReactiveForm() {
    List<String> missing = new ArrayList<>();
    FORMS.forEach(
        (type, form) -> {
          for (Method async : type.getMethods()) {
            if (!async.getName().endsWith("Async")
                || !CompletionStage.class.isAssignableFrom(async.getReturnType())) {
              continue;
            }
            String name = async.getName().substring(0, async.getName().length() - 5);
            Method reactive = find(form, name, async.getParameterTypes(), type);
            if (reactive == null) {
              missing.add(
                  type.getSimpleName()
                      + "."
                      + async.getName()
                      + " has no "
                      + form.getSimpleName()
                      + "."
                      + name);
            } else if (!Mono.class.equals(reactive.getReturnType())) {
              missing.add(reactive + " does not return a Mono");
            }
          }
        });
    assertThat(missing).isEmpty();
  }

  @Test
  void everyPrimitiveWithAsyncOperationsHasAFactory() throws NoSuchMethodException {
    for (Map.Entry<Class<?>, Class<?>> entry : FORMS.entrySet()) {
      if (entry.getValue() != Reactive.class) {
        assertThat(Reactive.class.getMethod("of", entry.getKey()).getReturnType())
            .isEqualTo(entry.getValue());
      }
    }
  }

  /** An instance method with these parameters, or a static one with the wrapped type first. */
  private static @Nullable Method find(
      Class<?> form, String name, Class<?>[] parameters, Class<?> type) {
    for (Method candidate : form.getMethods()) {
      if (!candidate.getName().equals(name)) {
        continue;
      }
      Class<?>[] actual = candidate.getParameterTypes();
      if (Modifier.isStatic(candidate.getModifiers())) {
        if (actual.length == parameters.length + 1
            && actual[0].equals(type)
            && Arrays.equals(Arrays.copyOfRange(actual, 1, actual.length), parameters)) {
          return candidate;
        }
      } else if (Arrays.equals(actual, parameters)) {
        return candidate;
      }
    }
    return null;
  }
}
