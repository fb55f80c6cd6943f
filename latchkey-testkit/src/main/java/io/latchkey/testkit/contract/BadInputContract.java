package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedMutex;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockAdmin;
import io.latchkey.OwnerToken;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import org.assertj.core.api.SoftAssertions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Conformance: invalid arguments are refused with clear messages.
 *
 * <p>Refusals come before anything reaches the backend, so every check also verifies that nothing
 * was left held.
 *
 * <ul>
 *   <li>{@code nullNamesAreRefused}: every factory of a named resource refuses a null name with a
 *       NullPointerException naming the name.
 *   <li>{@code blankNamesAreRefused}: empty and blank names are refused as blank.
 *   <li>{@code oversizedNamesAreRefused}: a name one character longer than {@link
 *       Latchkey#MAX_NAME_LENGTH} is refused with the limit in the message.
 *   <li>{@code controlCharactersAreRefused}: names with control characters are refused, saying so.
 *   <li>{@code longestAndUnusualNamesAreData}: names of the maximal length and names full of
 *       quotes, script and SQL syntax, path elements, hash tags and non-ASCII characters lock like
 *       any other name, and names differing only in case, trailing space or Unicode normalisation
 *       are different locks.
 *   <li>{@code negativeWaitsAreRefused}: every waiting form refuses a negative (or null) wait.
 *   <li>{@code nonPositiveLeaseTimesAreRefused}: zero, negative and sub-millisecond lease times are
 *       refused by every form that takes one.
 *   <li>{@code absurdDurationsAreRefused}: waits and leases of hundreds of years are refused as
 *       mistakes, in the API and in the client options.
 *   <li>{@code semaphorePermitsMustBePositive}: zero and negative permit counts and deltas are
 *       refused.
 *   <li>{@code leasedSemaphoreArgumentsAreChecked}: negative permits, a zero delta and null or
 *       blank permit ids are refused.
 *   <li>{@code latchCountsMustBePositive}: zero and negative latch counts are refused.
 *   <li>{@code ownerTokensAreChecked}: OwnerToken.parse("x") and a null token are refused.
 *   <li>{@code closedClientRefusesOperations}: after close(), factories, acquires, queries and the
 *       admin fail with IllegalStateException saying the client is closed; close() is idempotent.
 * </ul>
 */
public abstract class BadInputContract extends ContractSupport {
  private static final Duration NEGATIVE = Duration.ofMillis(-1);
  private static final Duration ABSURD = Duration.ofDays(400_000);

  /** Every factory or admin operation that takes a resource name, for the declared features. */
  private Map<String, Consumer<@Nullable String>> namedOperations() {
    Latchkey c = client();
    Map<String, Consumer<@Nullable String>> operations = new LinkedHashMap<>();
    operations.put("lock", name -> c.lock(name));
    operations.put("mutex", name -> c.mutex(name));
    if (c.features().contains(Feature.FAIR_LOCK)) {
      operations.put("fairLock", name -> c.fairLock(name));
    }
    if (c.features().contains(Feature.READ_WRITE_LOCK)) {
      operations.put("readWriteLock", name -> c.readWriteLock(name));
    }
    if (c.features().contains(Feature.SEMAPHORE)) {
      operations.put("semaphore", name -> c.semaphore(name));
    }
    if (c.features().contains(Feature.LEASED_SEMAPHORE)) {
      operations.put("leasedSemaphore", name -> c.leasedSemaphore(name));
    }
    if (c.features().contains(Feature.COUNT_DOWN_LATCH)) {
      operations.put("countDownLatch", name -> c.countDownLatch(name));
    }
    operations.put("admin().inspect", name -> c.admin().inspect(name));
    operations.put("admin().forceRelease", name -> c.admin().forceRelease(name));
    return operations;
  }

  private void assertEveryNamedOperationRefuses(
      @Nullable String name, Class<? extends Throwable> type, String messagePart) {
    SoftAssertions softly = new SoftAssertions();
    namedOperations()
        .forEach(
            (operation, call) ->
                softly
                    .assertThat(catchThrowable(() -> call.accept(name)))
                    .as("%s(%s)", operation, describe(name))
                    .isInstanceOf(type)
                    .hasMessageContaining("name")
                    .hasMessageContaining(messagePart));
    softly.assertAll();
  }

  private static String describe(@Nullable String name) {
    if (name == null) {
      return "null";
    }
    String shown = name.length() > 20 ? name.substring(0, 20) + "…" : name;
    return "\"" + shown.replaceAll("\\p{Cntrl}", "?") + "\" (" + name.length() + " chars)";
  }

  @Test
  void nullNamesAreRefused() {
    assertEveryNamedOperationRefuses(null, NullPointerException.class, "null");
  }

  @Test
  void blankNamesAreRefused() {
    assertEveryNamedOperationRefuses("", IllegalArgumentException.class, "blank");
    assertEveryNamedOperationRefuses("   ", IllegalArgumentException.class, "blank");
  }

  @Test
  void oversizedNamesAreRefused() {
    String oversized = "x".repeat(Latchkey.MAX_NAME_LENGTH + 1);

    assertEveryNamedOperationRefuses(
        oversized, IllegalArgumentException.class, String.valueOf(Latchkey.MAX_NAME_LENGTH));
  }

  @Test
  void controlCharactersAreRefused() {
    for (String name : List.of("nul\u0000name", "line\nbreak", "tab\tname", "del\u007fname")) {
      assertEveryNamedOperationRefuses(name, IllegalArgumentException.class, "control");
    }
  }

  @Test
  void longestAndUnusualNamesAreData() {
    String base = uniqueName("names");
    List<String> names = new ArrayList<>();
    names.add(base + "x".repeat(Latchkey.MAX_NAME_LENGTH - base.length()));
    names.add(base + "/quotes ' \" ` and \\ backslash");
    names.add(base + "/sql'; DROP TABLE locks; -- %_*");
    names.add(base + "/lua ]] .. redis.call('FLUSHALL') --[[");
    names.add(base + "/{hash-tag} *?[glob]");
    names.add(base + "/../..");
    names.add(base + "/./");
    names.add(base + "/ünïcödé ✓ 锁 🔒");
    names.add(base + "/case");
    names.add(base + "/CASE");
    names.add(base + "/space");
    names.add(base + "/space ");
    names.add(base + "/caf\u00e9");
    names.add(base + "/cafe\u0301");
    Latchkey other = newClient();

    for (String name : names) {
      DistributedLock lock = client().lock(name);
      assertThat(lock.tryLock()).as("lock %s", name).isTrue();
      assertThat(other.lock(name).tryLock()).as("other client on %s", name).isFalse();
    }
    for (String name : names) {
      assertThat(client().admin().inspect(name))
          .as("inspect %s", name)
          .hasValueSatisfying(info -> assertThat(info.name()).isEqualTo(name));
      client().lock(name).unlock();
      assertThat(other.lock(name).isLocked()).as("after unlock of %s", name).isFalse();
    }
  }

  @Test
  // Passes null where the API forbids it on purpose: checks that the call refuses it.
  @SuppressWarnings("NullAway")
  void negativeWaitsAreRefused() {
    String name = uniqueName("bad-wait");
    DistributedLock lock = client().lock(name);
    DistributedMutex mutex = client().mutex(name);
    Duration lease = Duration.ofSeconds(1);
    List<ThrowingCallable> calls = new ArrayList<>();
    calls.add(() -> lock.acquire(NEGATIVE));
    calls.add(() -> lock.acquire(NEGATIVE, lease));
    calls.add(() -> lock.tryLock(NEGATIVE));
    calls.add(() -> lock.tryLock(NEGATIVE, lease));
    calls.add(() -> lock.acquireAsync(NEGATIVE).toCompletableFuture().join());
    calls.add(() -> lock.acquireAsync(NEGATIVE, lease).toCompletableFuture().join());
    calls.add(() -> mutex.acquire(NEGATIVE));
    calls.add(() -> mutex.acquire(NEGATIVE, lease));
    calls.add(() -> mutex.acquireAsync(NEGATIVE).toCompletableFuture().join());
    Latchkey c = client();
    if (c.features().contains(Feature.SEMAPHORE)) {
      DistributedSemaphore semaphore = c.semaphore(name);
      calls.add(() -> semaphore.tryAcquire(1, NEGATIVE));
      calls.add(() -> semaphore.acquire(1, NEGATIVE));
      calls.add(() -> semaphore.acquireAsync(1, NEGATIVE).toCompletableFuture().join());
    }
    if (c.features().contains(Feature.LEASED_SEMAPHORE)) {
      LeasedSemaphore leased = c.leasedSemaphore(name);
      calls.add(() -> leased.acquire(NEGATIVE));
      calls.add(() -> leased.acquire(NEGATIVE, lease));
      calls.add(() -> leased.acquireAsync(NEGATIVE, lease).toCompletableFuture().join());
    }
    if (c.features().contains(Feature.COUNT_DOWN_LATCH)) {
      DistributedCountDownLatch latch = c.countDownLatch(name);
      calls.add(() -> latch.await(NEGATIVE));
      calls.add(() -> latch.awaitAsync(NEGATIVE).toCompletableFuture().join());
    }

    assertAllRefused(calls, IllegalArgumentException.class, "wait");
    assertAllRefused(
        List.of(() -> lock.acquire(null), () -> mutex.acquire(null)),
        NullPointerException.class,
        "wait");
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  // Passes null where the API forbids it on purpose: checks that the call refuses it.
  @SuppressWarnings("NullAway")
  void nonPositiveLeaseTimesAreRefused() {
    String name = uniqueName("bad-lease");
    DistributedLock lock = client().lock(name);
    DistributedMutex mutex = client().mutex(name);
    List<ThrowingCallable> calls = new ArrayList<>();
    for (Duration lease : List.of(Duration.ZERO, NEGATIVE, Duration.ofNanos(1))) {
      calls.add(() -> lock.acquire(Duration.ZERO, lease));
      calls.add(() -> lock.tryLock(Duration.ZERO, lease));
      calls.add(() -> lock.lock(lease));
      calls.add(() -> lock.acquireAsync(Duration.ZERO, lease).toCompletableFuture().join());
      calls.add(() -> mutex.acquire(Duration.ZERO, lease));
      if (client().features().contains(Feature.LEASED_SEMAPHORE)) {
        LeasedSemaphore leased = client().leasedSemaphore(name);
        calls.add(() -> leased.tryAcquire(lease));
        calls.add(() -> leased.acquire(Duration.ZERO, lease));
        calls.add(() -> leased.acquireAsync(Duration.ZERO, lease).toCompletableFuture().join());
      }
    }

    assertAllRefused(calls, IllegalArgumentException.class, "leaseTime");
    assertAllRefused(
        List.of(() -> lock.lock(null), () -> lock.acquire(Duration.ZERO, null)),
        NullPointerException.class,
        "leaseTime");
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void absurdDurationsAreRefused() {
    String name = uniqueName("bad-duration");
    DistributedLock lock = client().lock(name);
    DistributedMutex mutex = client().mutex(name);
    Duration forever = ChronoUnit.FOREVER.getDuration();
    Duration fine = Duration.ofSeconds(1);

    assertAllRefused(
        List.of(
            () -> lock.acquire(ABSURD),
            () -> lock.acquire(forever),
            () -> lock.tryLock(ABSURD),
            () -> lock.acquireAsync(ABSURD).toCompletableFuture().join(),
            () -> mutex.acquire(ABSURD)),
        IllegalArgumentException.class,
        "wait");
    assertAllRefused(
        List.of(
            () -> lock.acquire(fine, ABSURD),
            () -> lock.acquire(fine, forever),
            () -> lock.lock(ABSURD),
            () -> lock.tryLock(fine, ABSURD),
            () -> lock.acquireAsync(fine, ABSURD).toCompletableFuture().join(),
            () -> mutex.acquire(fine, ABSURD)),
        IllegalArgumentException.class,
        "leaseTime");
    assertThat(lock.isLocked()).isFalse();

    assertAllRefused(
        List.of(
            () -> LatchkeyOptions.builder().leaseTime(ABSURD),
            () -> LatchkeyOptions.builder().renewInterval(ABSURD),
            () -> LatchkeyOptions.builder().operationTimeout(ABSURD),
            () -> LatchkeyOptions.builder().recheckInterval(ABSURD),
            () -> LatchkeyOptions.builder().queueKeepAlive(ABSURD),
            () -> LatchkeyOptions.builder().leaseTime(Duration.ZERO),
            () -> LatchkeyOptions.builder().operationTimeout(NEGATIVE)),
        IllegalArgumentException.class,
        "must be between");
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  void semaphorePermitsMustBePositive() {
    DistributedSemaphore semaphore = client().semaphore(uniqueName("bad-permits"));
    Duration wait = Duration.ofMillis(10);

    assertAllRefused(
        List.of(
            () -> semaphore.tryAcquire(0),
            () -> semaphore.tryAcquire(-1),
            () -> semaphore.tryAcquire(0, wait),
            () -> semaphore.acquire(0, wait),
            () -> semaphore.acquireAsync(-1, wait).toCompletableFuture().join(),
            () -> semaphore.release(0),
            () -> semaphore.release(-1),
            () -> semaphore.releaseAsync(0).toCompletableFuture().join(),
            () -> semaphore.trySetPermits(-1)),
        IllegalArgumentException.class,
        "permits");
    assertAllRefused(
        List.of(() -> semaphore.addPermits(0)), IllegalArgumentException.class, "zero");
    assertThat(semaphore.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  // Passes null where the API forbids it on purpose: checks that the call refuses it.
  @SuppressWarnings("NullAway")
  void leasedSemaphoreArgumentsAreChecked() {
    LeasedSemaphore semaphore = client().leasedSemaphore(uniqueName("bad-leased"));

    assertAllRefused(
        List.of(() -> semaphore.trySetPermits(-1)), IllegalArgumentException.class, "permits");
    assertAllRefused(
        List.of(() -> semaphore.addPermits(0)), IllegalArgumentException.class, "zero");
    assertAllRefused(
        List.of(() -> semaphore.release(""), () -> semaphore.release("  ")),
        IllegalArgumentException.class,
        "permitId");
    assertAllRefused(
        List.of(() -> semaphore.release((String) null)), NullPointerException.class, "permitId");
    assertThat(semaphore.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  void latchCountsMustBePositive() {
    DistributedCountDownLatch latch = client().countDownLatch(uniqueName("bad-count"));

    assertAllRefused(
        List.of(() -> latch.trySetCount(0), () -> latch.trySetCount(-5)),
        IllegalArgumentException.class,
        "count");
    assertThat(latch.count()).isZero();
  }

  @Test
  // Passes null where the API forbids it on purpose: checks that the call refuses it.
  @SuppressWarnings("NullAway")
  void ownerTokensAreChecked() {
    DistributedLock lock = client().lock(uniqueName("bad-token"));

    assertThatThrownBy(() -> OwnerToken.parse("x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("owner token")
        .hasMessageContaining("'x'");
    assertThatThrownBy(() -> lock.withOwner(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("owner");
  }

  @Test
  void closedClientRefusesOperations() {
    String name = uniqueName("closed");
    Latchkey closing = newClient();
    DistributedLock lock = closing.lock(name);
    DistributedMutex mutex = closing.mutex(name);
    LockAdmin admin = closing.admin();

    closing.close();
    closing.close();

    List<ThrowingCallable> calls = new ArrayList<>();
    namedOperationsOf(closing).forEach(call -> calls.add(() -> call.accept(name)));
    calls.add(closing::admin);
    calls.add(lock::tryLock);
    calls.add(lock::tryAcquire);
    calls.add(lock::lock);
    calls.add(() -> lock.acquire(Duration.ZERO));
    calls.add(() -> lock.tryLock(Duration.ofMillis(10)));
    calls.add(() -> lock.acquireAsync(Duration.ZERO).toCompletableFuture().join());
    calls.add(lock::isLocked);
    calls.add(lock::remainingLease);
    calls.add(lock::forceUnlock);
    calls.add(mutex::tryAcquire);
    calls.add(() -> mutex.acquire(Duration.ZERO));
    calls.add(mutex::isLocked);
    calls.add(() -> admin.inspect(name));
    calls.add(() -> admin.forceRelease(name));
    if (closing.features().contains(Feature.ADMIN)) {
      calls.add(admin::list);
    }
    assertAllRefused(calls, IllegalStateException.class, "closed");

    assertThat(client().lock(name).isLocked()).isFalse();
  }

  private static List<Consumer<String>> namedOperationsOf(Latchkey c) {
    List<Consumer<String>> operations = new ArrayList<>();
    operations.add(c::lock);
    operations.add(c::mutex);
    operations.add(c::fairLock);
    operations.add(c::readWriteLock);
    operations.add(c::semaphore);
    operations.add(c::leasedSemaphore);
    operations.add(c::countDownLatch);
    return operations;
  }

  /**
   * Checks that every call fails with {@code type} and a message containing {@code messagePart}.
   * Calls of asynchronous forms join the stage they get, so that a refusal may come either as a
   * throw or as a failed stage.
   */
  private static void assertAllRefused(
      List<ThrowingCallable> calls, Class<? extends Throwable> type, String messagePart) {
    SoftAssertions softly = new SoftAssertions();
    for (int i = 0; i < calls.size(); i++) {
      Throwable thrown = catchThrowable(calls.get(i));
      if (thrown instanceof CompletionException && thrown.getCause() != null) {
        thrown = thrown.getCause();
      }
      softly
          .assertThat(thrown)
          .as("call #%d of %d", i, calls.size())
          .isInstanceOf(type)
          .hasMessageContaining(messagePart);
    }
    softly.assertAll();
  }
}
