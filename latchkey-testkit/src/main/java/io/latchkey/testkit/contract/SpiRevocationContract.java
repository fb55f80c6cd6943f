package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.WakeupBus;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conformance of the SPI: {@code LockStore.requestRevocation} and {@code
 * LatchkeyBackend.subscribeRevocations}, called on the backend directly.
 *
 * <ul>
 *   <li>{@code eachHolderHearsOfItsOwnGrant}: the request reaches the client of each live holder
 *       with the holder's grant (owner and fencing token), and counts the holders.
 *   <li>{@code nobodyIsAskedForAFreeLock}: a request for a lock nobody holds counts zero.
 *   <li>{@code withoutTheFeatureBothRefuse}: a backend without {@link Feature#REVOCATION} fails
 *       both stages with UnsupportedFeatureException.
 * </ul>
 */
public abstract class SpiRevocationContract extends SpiContractSupport {
  @Test
  @RequiresFeature({Feature.REVOCATION, Feature.READ_WRITE_LOCK})
  void eachHolderHearsOfItsOwnGrant() {
    String name = uniqueName("spi-revocation");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    List<GrantRef> firstHeard = new CopyOnWriteArrayList<>();
    List<GrantRef> secondHeard = new CopyOnWriteArrayList<>();
    WakeupBus.Subscription firstListening = join(first.subscribeRevocations(firstHeard::add));
    WakeupBus.Subscription secondListening = join(second.subscribeRevocations(secondHeard::add));
    String firstOwner = owner("reader");
    String secondOwner = owner("reader");
    long firstToken = acquired(first, shared(name, firstOwner)).fencingToken();
    long secondToken = acquired(second, shared(name, secondOwner)).fencingToken();

    int asked = join(open().locks().requestRevocation(name));

    assertThat(asked).isEqualTo(2);
    eventually().until(() -> !firstHeard.isEmpty() && !secondHeard.isEmpty());
    assertThat(firstHeard).containsExactly(lockGrant(name, firstOwner, firstToken));
    assertThat(secondHeard).containsExactly(lockGrant(name, secondOwner, secondToken));
    join(firstListening.unsubscribe());
    join(secondListening.unsubscribe());
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void nobodyIsAskedForAFreeLock() {
    assertThat(join(open().locks().requestRevocation(uniqueName("spi-revocation-free")))).isZero();
  }

  @Test
  @RequiresMissingFeature(Feature.REVOCATION)
  void withoutTheFeatureBothRefuse() {
    LatchkeyBackend backend = open();
    assertUnsupported(backend.locks().requestRevocation(uniqueName("spi-revocation-missing")));
    assertUnsupported(backend.subscribeRevocations(grant -> {}));
  }

  private static void assertUnsupported(CompletionStage<?> stage) {
    try {
      stage.toCompletableFuture().get(Awaiting.PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("the backend did not refuse");
    } catch (ExecutionException e) {
      assertThat(e.getCause())
          .isInstanceOfSatisfying(
              UnsupportedFeatureException.class,
              refusal -> assertThat(refusal.feature()).isEqualTo(Feature.REVOCATION));
    } catch (Exception e) {
      throw new AssertionError("the backend neither answered nor refused: " + e, e);
    }
  }
}
