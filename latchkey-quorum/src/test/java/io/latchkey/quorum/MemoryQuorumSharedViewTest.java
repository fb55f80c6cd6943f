package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Another client reads a shared grant's exact fencing token from the members' holder records also
 * when a member granted it too late to count (docs/adr/0009-quorum-fencing.md, "Another client's
 * view of the token"): a late member grant below the token, whose record would shift the rank the
 * token had, is undone; one above it, which keeps the rank on the token, stays. And a member that
 * answers after the others but within the member timeout is waited for, so that the view is the
 * token from the moment the grant is handed out.
 */
class MemoryQuorumSharedViewTest {
  private final MemoryLockServer first = new MemoryLockServer();
  private final MemoryLockServer second = new MemoryLockServer();
  private final MemoryLockServer third = new MemoryLockServer();
  private final HeldBackAnswers late = new HeldBackAnswers();
  // Its third member answers attempts only after late.answer().
  private final Latchkey holderClient = quorum(late.around(third.backend()));
  private final Latchkey otherClient = quorum(third.backend());
  private final HeldBackAnswers slow = new HeldBackAnswers();
  // Its third member answers attempts after a delay well within the member timeout (2 s).
  private final Latchkey slowThirdClient = quorum(slow.around(third.backend()));
  private final Latchkey thirdAlone = Latchkey.using(third.backend(), LatchkeyOptions.defaults());

  @AfterEach
  void closeClients() {
    holderClient.close();
    otherClient.close();
    slowThirdClient.close();
    thirdAlone.close();
  }

  @Test
  void anotherClientSeesTheTokenOfASharedGrantThatAMemberGrantedLate() {
    String name = "shared-late";
    Lease read = readDecidedByTheFirstTwo(name);

    // Its answer arrives: its grant (value 1) did not count and is undone, so the members that
    // show the holder are those whose values the token was ranked among.
    late.answer();
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(holderOn(thirdAlone, name, read))
                    .as("the late member grant, undone")
                    .isFalse());
    assertThat(MemoryQuorumInspectionTest.tokenSeenBy(otherClient, name, read))
        .isEqualTo(read.fencingToken());
    read.release();
    assertThat(otherClient.readWriteLock(name).writeLock().tryAcquire()).isPresent();
  }

  @Test
  void aLateMemberGrantAboveTheTokenStaysWithTheSharedGrant() {
    String name = "shared-late-above";
    MemoryQuorumInspectionTest.runAhead(third, name, 200);
    Lease read = readDecidedByTheFirstTwo(name);

    // Its value (201) is above the token: its record moves the view's rank onto the token again,
    // and it stays, holding writers back on the third member too.
    late.answer();
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> holderOn(thirdAlone, name, read));
    assertThat(MemoryQuorumInspectionTest.tokenSeenBy(otherClient, name, read))
        .isEqualTo(read.fencingToken());
    // Released with the grant, as a member grant of it.
    read.release();
    await().atMost(Duration.ofSeconds(5)).until(() -> !holderOn(thirdAlone, name, read));
  }

  /**
   * The third member answers 500 ms after the others, as a Redis member often answers after
   * in-memory ones (MixedQuorumConformanceTest). Before, the first two decided the read at once
   * (token 101, the first's, written back to the second), the third's grant (value 1) was undone
   * only once its answer came, and another client inspecting the lock in between ranked the third's
   * record with the others: it saw the second's value, 1, not the token (the kit's
   * sharedHoldersHoldTogether failed so on mixed members). A shared attempt now waits for every
   * member that answers within the member timeout: all three count, and the token is the value of
   * the majority's rank, which every record showing the holder gives.
   */
  @Test
  void anotherClientSeesTheTokenOfASharedGrantAsSoonAsItIsHandedOut() {
    String name = "shared-slow";
    MemoryQuorumInspectionTest.runAhead(first, name, 100);
    slow.answerAfter(Duration.ofMillis(500));
    Lease read = slowThirdClient.readWriteLock(name).readLock().tryAcquire().orElseThrow();

    assertThat(MemoryQuorumInspectionTest.tokenSeenBy(otherClient, name, read))
        .isEqualTo(read.fencingToken());
    assertThat(holderOn(thirdAlone, name, read)).as("the third member's grant").isTrue();
    read.release();
  }

  /**
   * A shared attempt does not wait again for a member that left an attempt unanswered at the member
   * timeout (frozen or cut off): the next attempts are decided by the members that answer. With a
   * lease shorter than that timeout, an attempt that waited for the silent member would have no
   * validity left when it is decided, and be refused.
   */
  @Test
  void aSharedAttemptDoesNotWaitAgainForAMemberThatLeftOneUnanswered() {
    String name = "shared-silent";
    try (LatchkeyBackend quorum =
        Quorum.builder()
            .member(first.backend())
            .member(second.backend())
            .member(late.around(third.backend()))
            .memberTimeout(Duration.ofSeconds(1))
            .build()
            .open(
                new BackendContext(
                    "shared-silent-client", Duration.ofSeconds(5), Duration.ofSeconds(5)))) {
      assertThat(shortRead(quorum, name, "first-reader").status())
          .as("waited for the third member until the member timeout, past the lease")
          .isEqualTo(AcquireResult.Status.BUSY);
      assertThat(shortRead(quorum, name, "second-reader").status())
          .isEqualTo(AcquireResult.Status.GRANTED);
    }
  }

  /** One shared attempt with a lease of 300 ms, shorter than the member timeout. */
  private static AcquireResult shortRead(LatchkeyBackend quorum, String name, String owner) {
    return quorum
        .locks()
        .tryAcquire(new LockRequest(name, owner, LockMode.SHARED, 300, false, 0))
        .toCompletableFuture()
        .join();
  }

  /**
   * The first member runs ahead (counter 100); the third grants a read at once but answers only
   * when the test says: once the member timeout (2 s) has passed, the first two decide, the token
   * is the larger of their values (101, 1), and the write-back raises the second's counter to it.
   */
  private Lease readDecidedByTheFirstTwo(String name) {
    MemoryQuorumInspectionTest.runAhead(first, name, 100);
    Lease read = holderClient.readWriteLock(name).readLock().tryAcquire().orElseThrow();
    assertThat(read.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK).isEqualTo(101);
    assertThat(holderOn(thirdAlone, name, read)).as("the third member's grant").isTrue();
    return read;
  }

  private Latchkey quorum(BackendFactory thirdMember) {
    return Latchkey.using(
        Quorum.builder()
            .member(first.backend())
            .member(second.backend())
            .member(thirdMember)
            .build(),
        LatchkeyOptions.defaults());
  }

  private static boolean holderOn(Latchkey member, String name, Lease lease) {
    return member.admin().inspect(name).stream()
        .flatMap(info -> info.holders().stream())
        .anyMatch(holder -> holder.owner().equals(lease.holderId()));
  }

  /**
   * A member whose acquire attempts are applied at once but answered only after {@link #answer}: a
   * slow link back from a member, as a quorum sees it.
   */
  private static final class HeldBackAnswers {
    private final CompletableFuture<Void> released = new CompletableFuture<>();

    void answer() {
      released.complete(null);
    }

    /** Answers {@code delay} from now: a member behind a slower link than the others. */
    void answerAfter(Duration delay) {
      CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS)
          .execute(this::answer);
    }

    BackendFactory around(BackendFactory real) {
      return context -> {
        LatchkeyBackend backend = real.open(context);
        LockStore locks = backend.locks();
        LockStore heldBack =
            proxy(
                LockStore.class,
                (self, method, args) -> {
                  Object result = forward(locks, method, args);
                  return method.getName().equals("tryAcquire")
                      ? ((CompletionStage<?>) result).thenCombine(released, (answer, go) -> answer)
                      : result;
                });
        return proxy(
            LatchkeyBackend.class,
            (self, method, args) ->
                method.getName().equals("locks") ? heldBack : forward(backend, method, args));
      };
    }

    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
      return type.cast(
          Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object forward(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }
}
