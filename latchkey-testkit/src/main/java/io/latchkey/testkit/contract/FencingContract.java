package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.OwnerToken;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Conformance: fencing tokens grow with every grant of a name.
 *
 * <ul>
 *   <li>{@code tokensGrowWithEveryGrantAcrossClients}: successive grants of one name, to owners of
 *       different clients, carry strictly increasing tokens.
 *   <li>{@code everyHandleOfANameSharesOneSequence}: grants through lock, mutex, fair lock and
 *       write lock of one name (as far as declared) continue one increasing sequence.
 *   <li>{@code reentryKeepsTheToken}: re-entries carry the token of the grant they joined, also
 *       when an owner token re-enters from another client (which a backend without {@link
 *       Feature#REMOTE_OWNER_TOKENS} may refuse instead, leaving the caller's grant alone).
 *   <li>{@code tokensKeepGrowingAfterExpiryAndForceRelease}: a grant after an expired lease or a
 *       force release still gets a higher token than any before it.
 *   <li>{@code staleOwnerIsFencedOff}: a resource that refuses tokens lower than the highest it has
 *       seen rejects the write of an owner whose lease ran out while it was paused.
 * </ul>
 */
public abstract class FencingContract extends ContractSupport {
  private static final Duration SHORT_LEASE = Duration.ofMillis(300);

  @Test
  void tokensGrowWithEveryGrantAcrossClients() throws InterruptedException {
    String name = uniqueName("fencing");
    List<Latchkey> clients = List.of(client(), newClient(), newClient());
    long highest = Long.MIN_VALUE;

    for (int round = 0; round < 9; round++) {
      try (Lease lease = clients.get(round % clients.size()).lock(name).acquire(Duration.ZERO)) {
        assertThat(lease.fencingToken()).as("token of grant %d", round).isGreaterThan(highest);
        highest = lease.fencingToken();
      }
    }
  }

  @Test
  void everyHandleOfANameSharesOneSequence() throws InterruptedException {
    String name = uniqueName("fencing");
    Latchkey other = newClient();
    List<Long> tokens = new ArrayList<>();

    try (Lease lease = client().lock(name).acquire(Duration.ZERO)) {
      tokens.add(lease.fencingToken());
    }
    try (Lease lease = other.mutex(name).acquire(Duration.ZERO)) {
      tokens.add(lease.fencingToken());
    }
    if (client().features().contains(Feature.FAIR_LOCK)) {
      try (Lease lease = client().fairLock(name).acquire(Duration.ZERO)) {
        tokens.add(lease.fencingToken());
      }
    }
    if (client().features().contains(Feature.READ_WRITE_LOCK)) {
      try (Lease lease = other.readWriteLock(name).writeLock().acquire(Duration.ZERO)) {
        tokens.add(lease.fencingToken());
      }
    }
    try (Lease lease = other.lock(name).acquire(Duration.ZERO)) {
      tokens.add(lease.fencingToken());
    }

    assertThat(tokens).isSorted().doesNotHaveDuplicates();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void reentryKeepsTheToken() throws InterruptedException {
    String name = uniqueName("fencing");
    DistributedLock lock = client().lock(name);
    Lease outer = lock.acquire(Duration.ZERO);
    Lease inner = lock.acquire(Duration.ZERO, Duration.ofSeconds(5));
    Optional<Lease> third = lock.tryAcquire();

    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
    assertThat(third)
        .hasValueSatisfying(l -> assertThat(l.fencingToken()).isEqualTo(outer.fencingToken()));

    OwnerToken owner = client().newOwnerToken();
    String tokenName = uniqueName("fencing-token");
    Lease callerLease = client().lock(tokenName).withOwner(owner).acquire(Duration.ZERO);
    DistributedLock callee = newClient().lock(tokenName).withOwner(OwnerToken.parse(owner.value()));
    Optional<Lease> calleeLease = reenterElsewhere(() -> callee.acquire(Duration.ZERO));
    calleeLease.ifPresent(
        lease -> assertThat(lease.fencingToken()).isEqualTo(callerLease.fencingToken()));
    calleeLease.ifPresent(Lease::release);
    assertThat(callerLease.isValid()).isTrue();
    callerLease.release();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void tokensKeepGrowingAfterExpiryAndForceRelease() throws InterruptedException {
    String name = uniqueName("fencing");
    Lease expired = client().lock(name).acquire(Duration.ZERO, SHORT_LEASE);
    DistributedLock second = newClient().lock(name);

    Lease afterExpiry = eventually().until(second::tryAcquire, Optional::isPresent).orElseThrow();
    assertThat(afterExpiry.fencingToken()).isGreaterThan(expired.fencingToken());

    assertThat(client().admin().forceRelease(name)).isTrue();
    Lease afterForce = newClient().lock(name).acquire(Duration.ZERO);
    assertThat(afterForce.fencingToken()).isGreaterThan(afterExpiry.fencingToken());
    afterForce.release();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void staleOwnerIsFencedOff() throws InterruptedException {
    String name = uniqueName("fencing");
    FencedRegister register = new FencedRegister();
    Lease stale = client().lock(name).acquire(Duration.ZERO, SHORT_LEASE);
    assertThat(register.write(stale.fencingToken(), "first")).isTrue();

    // The first owner pauses (a GC, a network stall) past its lease; another owner takes over.
    DistributedLock successor = newClient().lock(name);
    Lease fresh = eventually().until(successor::tryAcquire, Optional::isPresent).orElseThrow();
    assertThat(register.write(fresh.fencingToken(), "second")).isTrue();

    // The first owner wakes up and writes as if it still held the lock.
    assertThat(stale.isValid()).isFalse();
    assertThat(register.write(stale.fencingToken(), "stale")).isFalse();
    assertThat(register.values()).containsExactly("first", "second");
    assertThat(register.write(fresh.fencingToken(), "third")).isTrue();
    fresh.release();
  }

  /**
   * A protected resource that remembers the highest fencing token it has seen and refuses writes
   * with lower ones, as a database would with {@code UPDATE ... WHERE fence <= :token}.
   */
  private static final class FencedRegister {
    private final List<String> values = new ArrayList<>();
    private long highestToken = Long.MIN_VALUE;

    synchronized boolean write(long token, String value) {
      if (token < highestToken) {
        return false;
      }
      highestToken = token;
      values.add(value);
      return true;
    }

    synchronized List<String> values() {
      return List.copyOf(values);
    }
  }
}
