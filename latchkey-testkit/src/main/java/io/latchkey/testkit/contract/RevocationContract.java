package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Conformance: cooperative revocation ({@link Feature#REVOCATION}).
 *
 * <ul>
 *   <li>{@code holderIsAskedOnTheCallbackExecutorAndHandsOver}: a request from another client runs
 *       the holder's handler on the holder's callback executor; the handler releases and the
 *       requester takes the lock.
 *   <li>{@code requestForAFreeLockSaysNobodyHoldsIt}: asking for a lock nobody holds answers false.
 *   <li>{@code requestBeforeTheHandlerIsKept}: a request that arrived before the handler was
 *       registered runs the handler at once, and the lease says it was asked.
 *   <li>{@code holderWithoutHandlerKeepsTheLock}: a request takes nothing away.
 *   <li>{@code everyReaderIsAsked}: every holder of a shared lock hears the request.
 *   <li>{@code mutexHolderIsAsked}: the mutex's holder hears it too.
 *   <li>{@code permitLeasesAreNotRevocable}: a leased-semaphore permit refuses a handler.
 *   <li>{@code withoutTheFeatureEverythingIsRefused}: the feature hidden from a client, both the
 *       request and the handler are refused with UnsupportedFeatureException; a backend that lacks
 *       it refuses the same way.
 * </ul>
 */
public abstract class RevocationContract extends ContractSupport {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String CALLBACK_THREAD = "kit-revocation-callbacks";

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void holderIsAskedOnTheCallbackExecutorAndHandsOver() throws InterruptedException {
    String name = uniqueName("revocation");
    ExecutorService callbacks = namedPool();
    Latchkey holder = newClient(options -> options.callbackExecutor(callbacks));
    Lease held = holder.lock(name).acquire(Duration.ZERO);
    AtomicReference<String> handlerThread = new AtomicReference<>();
    held.onRevocationRequested(
        lease -> {
          handlerThread.set(Thread.currentThread().getName());
          lease.release();
        });

    Latchkey requester = newClient();
    assertThat(requester.lock(name).requestRevocation()).isTrue();
    Lease taken = requester.lock(name).acquire(WAIT);

    eventually().until(() -> CALLBACK_THREAD.equals(handlerThread.get()));
    assertThat(held.isValid()).isFalse();
    assertThat(held.isRevocationRequested()).isTrue();
    taken.release();
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void requestForAFreeLockSaysNobodyHoldsIt() {
    assertThat(client().lock(uniqueName("revocation-free")).requestRevocation()).isFalse();
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void requestBeforeTheHandlerIsKept() throws InterruptedException {
    String name = uniqueName("revocation-early");
    Lease held = client().lock(name).acquire(Duration.ZERO);
    held.onRevocationRequested(lease -> {}); // listening from now on
    assertThat(newClient().lock(name).requestRevocation()).isTrue();
    eventually().until(held::isRevocationRequested);

    List<Lease> asked = new CopyOnWriteArrayList<>();
    held.onRevocationRequested(asked::add);

    eventually().until(() -> asked.contains(held));
    held.release();
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void holderWithoutHandlerKeepsTheLock() throws InterruptedException {
    String name = uniqueName("revocation-ignored");
    Lease held = client().lock(name).acquire(Duration.ZERO);
    held.onRevocationRequested(lease -> {}); // hears it, and ignores it
    Latchkey requester = newClient();

    assertThat(requester.lock(name).requestRevocation()).isTrue();

    eventually().until(held::isRevocationRequested);
    assertThat(held.isValid()).isTrue();
    assertThat(requester.lock(name).tryAcquire()).isEmpty();
    held.release();
  }

  @Test
  @RequiresFeature({Feature.REVOCATION, Feature.READ_WRITE_LOCK})
  void everyReaderIsAsked() throws InterruptedException {
    String name = uniqueName("revocation-readers");
    List<Lease> asked = new CopyOnWriteArrayList<>();
    Lease first = client().readWriteLock(name).readLock().acquire(Duration.ZERO);
    Lease second = newClient().readWriteLock(name).readLock().acquire(Duration.ZERO);
    first.onRevocationRequested(asked::add);
    second.onRevocationRequested(asked::add);

    assertThat(newClient().lock(name).requestRevocation()).isTrue();

    eventually().until(() -> asked.size() == 2);
    assertThat(asked).containsExactlyInAnyOrder(first, second);
    first.release();
    second.release();
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void mutexHolderIsAsked() throws InterruptedException {
    String name = uniqueName("revocation-mutex");
    Lease held = client().mutex(name).acquire(Duration.ZERO);
    held.onRevocationRequested(Lease::release);

    assertThat(newClient().mutex(name).requestRevocation()).isTrue();

    eventually().until(() -> !held.isValid());
    assertThat(client().mutex(name).isLocked()).isFalse();
  }

  @Test
  @RequiresFeature({Feature.REVOCATION, Feature.LEASED_SEMAPHORE})
  void permitLeasesAreNotRevocable() throws InterruptedException {
    String name = uniqueName("revocation-permit");
    client().leasedSemaphore(name).trySetPermits(1);
    Lease permit = client().leasedSemaphore(name).acquire(Duration.ZERO);

    assertThatThrownBy(() -> permit.onRevocationRequested(lease -> {}))
        .isInstanceOf(UnsupportedOperationException.class)
        .isNotInstanceOf(UnsupportedFeatureException.class)
        .hasMessageContaining("only the leases of locks");
    permit.release();
  }

  @Test
  void withoutTheFeatureEverythingIsRefused() throws InterruptedException {
    String name = uniqueName("revocation-hidden");
    try (Latchkey masked =
        Latchkey.using(
            FeatureHidingBackend.hiding(fixture().backend(), EnumSet.of(Feature.REVOCATION)),
            testOptions().build())) {
      assertRefused(masked, name);
    }
  }

  @Test
  @RequiresMissingFeature(Feature.REVOCATION)
  void backendWithoutTheFeatureRefuses() throws InterruptedException {
    assertRefused(client(), uniqueName("revocation-missing"));
  }

  private static void assertRefused(Latchkey latchkey, String name) throws InterruptedException {
    assertThatThrownBy(() -> latchkey.lock(name).requestRevocation())
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.REVOCATION));
    Lease held = latchkey.lock(name).acquire(Duration.ZERO);
    assertThatThrownBy(() -> held.onRevocationRequested(lease -> {}))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.REVOCATION));
    held.release();
  }

  private ExecutorService namedPool() {
    ExecutorService pool = executor(1);
    // One thread, named so that the test can tell where the handler ran.
    var unused = pool.submit(() -> Thread.currentThread().setName(CALLBACK_THREAD));
    return pool;
  }
}
