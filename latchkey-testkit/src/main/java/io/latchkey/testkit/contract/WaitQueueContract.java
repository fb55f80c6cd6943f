package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: the wait queue of a lock record ({@link LockRequest}'s queue rules, {@link
 * io.latchkey.spi.LockStore#leaveQueue}) and the wake-ups releases publish. The queue is read
 * through inspect's {@code queuedWaiters} (so most tests need {@link Feature#ADMIN}), wake-ups
 * through a subscription on a third connection ({@link Feature#WAKEUP_PUSH}).
 *
 * <ul>
 *   <li>{@link #refusedRequestWithKeepAliveIsQueued}: a refused request with a keep-alive enters
 *       the queue once, however often it retries; one with keep-alive 0 does not.
 *   <li>{@link #leaveQueueRemovesTheWaiter}: leaveQueue removes a queued owner and leaves no entry
 *       behind; leaving when not queued changes nothing.
 *   <li>{@link #grantedWaiterLeavesTheQueue}: a queued owner that is granted leaves the queue; the
 *       others stay.
 *   <li>{@link #deadQueueEntryDropsOut}: an entry not renewed within its keep-alive drops out.
 *   <li>{@link #fairRequestsServeTheHeadOnly}: on a free lock with a queue, a fair newcomer or a
 *       waiter behind the head is refused (and a newcomer with keep-alive 0 not queued) while the
 *       head is granted; the head's fair re-entry is granted past the waiter; then the waiter is.
 *   <li>{@link #fairReaderWaitsBehindAQueuedWriter}: a fair reader that is new is refused while a
 *       writer waits at the head, though only readers hold; a reader's re-entry is granted.
 *   <li>{@link #fairQueueSkipsADeadHead}: a head that stops retrying no longer blocks the fair
 *       waiter behind it once its keep-alive ran out.
 *   <li>{@link #releaseWakesTheQueueHeadOnly}: a release with two waiters queued publishes one
 *       wake-up, aimed at the head.
 *   <li>{@link #releaseWithNobodyQueuedPublishesNothing}: a release while a refused try-lock (not
 *       queued) looked on publishes nothing: no herd.
 *   <li>{@link #sharedReleaseWithReadersLeftWakesNobody}: a reader's release while another reader
 *       holds wakes no queued writer; the last reader's release wakes it.
 *   <li>{@link #leavingBehindAnExclusiveHolderWakesNobody}: the head giving up while an exclusive
 *       holder holds wakes nobody.
 *   <li>{@link #sharedGrantToAQueuedReaderWakesTheNext}: a queued reader that is granted wakes the
 *       next waiter, which may be a reader too.
 *   <li>{@link #releasingTheExclusiveSideWakesAQueuedReader}: an owner holding both sides that
 *       releases the exclusive one leaves no exclusive holder, so the queued reader is woken.
 *   <li>{@link #headLeavingTheQueueWakesTheNext}: when the head of the queue of a free lock gives
 *       up, the next waiter is woken.
 *   <li>{@link #wokenHeadKeepsAFreeLockDuringItsHandoff}: a released lock whose head was woken is
 *       kept for that head while its hand-off lasts: a barger and the waiter behind are refused
 *       (with the hand-off's end as their hint), the head is granted.
 *   <li>{@link #wokenHeadThatDoesNotComeMissesItsTurn}: a woken head that does not come within the
 *       hand-off is skipped: the waiter behind it is granted, the head lost its place, and its next
 *       attempt queues again (at the tail).
 *   <li>{@link #missedTurnWakesTheNextWaiter}: an attempt that finds the woken head's hand-off over
 *       wakes the next waiter and keeps the lock for it.
 *   <li>{@link #readersMayEnterBesideAWokenReader}: a lock kept for a woken reader still lets a new
 *       reader in.
 * </ul>
 */
public abstract class WaitQueueContract extends SpiContractSupport {

  @Test
  @RequiresFeature(Feature.ADMIN)
  void refusedRequestWithKeepAliveIsQueued() {
    String name = uniqueName("spi-queue");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    acquired(holderBackend, exclusive(name, owner("holder")));
    String waiter = owner("waiter");

    refused(waiterBackend, queued(name, waiter, false), LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).isEqualTo(1);
    refused(waiterBackend, queued(name, waiter, false), LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).as("after a retry").isEqualTo(1);

    refused(waiterBackend, exclusive(name, owner("try-lock")), LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).as("after a try-lock").isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  void leaveQueueRemovesTheWaiter() {
    String name = uniqueName("spi-leave-queue");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    acquired(holderBackend, exclusive(name, owner("holder")));
    String waiter = owner("waiter");
    refused(waiterBackend, queued(name, waiter, false), LONG_LEASE);

    join(waiterBackend.locks().leaveQueue(name, waiter));
    assertThat(queuedWaiters(holderBackend, name)).isZero();

    join(waiterBackend.locks().leaveQueue(name, waiter));
    join(waiterBackend.locks().leaveQueue(uniqueName("spi-never-queued"), waiter));
    assertThat(queuedWaiters(holderBackend, name)).isZero();
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  void grantedWaiterLeavesTheQueue() {
    String name = uniqueName("spi-granted-waiter");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    String holder = owner("holder");
    String first = owner("first");
    String second = owner("second");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    refused(waiterBackend, queued(name, first, false), LONG_LEASE);
    refused(waiterBackend, queued(name, second, false), LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).isEqualTo(2);

    release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);
    acquired(waiterBackend, queued(name, first, false));

    assertThat(queuedWaiters(holderBackend, name)).as("the other waiter stays").isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  void deadQueueEntryDropsOut() {
    String name = uniqueName("spi-dead-waiter");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    acquired(holderBackend, exclusive(name, owner("holder")));
    LockRequest shortPlace =
        new LockRequest(name, owner("waiter"), LockMode.EXCLUSIVE, LONG_LEASE, false, BRIEF_LEASE);
    refused(waiterBackend, shortPlace, LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).isEqualTo(1);

    Awaiting.eventually().until(() -> queuedWaiters(holderBackend, name) == 0);
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void fairRequestsServeTheHeadOnly() {
    String name = uniqueName("spi-fair");
    QueueOfTwo queue = queueOfTwo(name, true);
    queue.releaseHolder();
    LatchkeyBackend holderBackend = queue.holderBackend();
    LatchkeyBackend waiterBackend = queue.waiterBackend();
    String head = queue.head();
    String behind = queue.behind();

    refused(waiterBackend, queued(name, behind, true), 0);
    LockRequest newcomer =
        new LockRequest(name, owner("newcomer"), LockMode.EXCLUSIVE, LONG_LEASE, true, 0);
    refused(waiterBackend, newcomer, 0);
    long headToken = acquired(waiterBackend, queued(name, head, true)).fencingToken();

    if (has(Feature.ADMIN)) {
      assertThat(queuedWaiters(holderBackend, name))
          .as("the waiter behind the head; the newcomer with keep-alive 0 never queued")
          .isEqualTo(1);
    }
    refused(waiterBackend, queued(name, behind, true), LONG_LEASE);
    AcquireResult reentry = acquired(waiterBackend, queued(name, head, true));
    assertThat(reentry.holds()).as("a fair re-entry past a queued waiter").isEqualTo(2);
    GrantRef headGrant = lockGrant(name, head, headToken);
    join(waiterBackend.locks().release(headGrant, LockMode.EXCLUSIVE));
    join(waiterBackend.locks().release(headGrant, LockMode.EXCLUSIVE));
    acquired(waiterBackend, queued(name, behind, true));
  }

  @Test
  @RequiresFeature({Feature.FAIR_LOCK, Feature.READ_WRITE_LOCK})
  void fairReaderWaitsBehindAQueuedWriter() {
    String name = uniqueName("spi-fair-reader");
    LatchkeyBackend readerBackend = open();
    LatchkeyBackend writerBackend = open();
    String writer = owner("writer");
    String reader = owner("reader");
    long token =
        acquired(readerBackend, queued(name, reader, LockMode.SHARED, true)).fencingToken();
    refused(writerBackend, queued(name, writer, true), LONG_LEASE);

    refused(readerBackend, queued(name, owner("late-reader"), LockMode.SHARED, true), 0);
    AcquireResult reentry = acquired(readerBackend, queued(name, reader, LockMode.SHARED, true));
    assertThat(reentry.holds()).as("a reader's fair re-entry past a queued writer").isEqualTo(2);
    assertThat(reentry.fencingToken()).isEqualTo(token);
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void fairQueueSkipsADeadHead() {
    String name = uniqueName("spi-fair-dead-head");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    String holder = owner("holder");
    String behind = owner("behind");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    LockRequest deadHead =
        new LockRequest(
            name, owner("dead-head"), LockMode.EXCLUSIVE, LONG_LEASE, true, SHORT_LEASE);
    refused(waiterBackend, deadHead, LONG_LEASE);
    refused(waiterBackend, queued(name, behind, true), LONG_LEASE);
    release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);

    Awaiting.eventually()
        .until(
            () -> join(waiterBackend.locks().tryAcquire(queued(name, behind, true))).isGranted());
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void releaseWakesTheQueueHeadOnly() {
    String name = uniqueName("spi-wake-head");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String holder = owner("holder");
    String head = owner("head");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    refused(waiterBackend, queued(name, head, false), LONG_LEASE);
    refused(waiterBackend, queued(name, owner("behind"), false), LONG_LEASE);

    release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);

    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(head));
    wakeups.assertNoneArrives();
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void releaseWithNobodyQueuedPublishesNothing() {
    String name = uniqueName("spi-no-herd");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend otherBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String holder = owner("holder");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    refused(otherBackend, exclusive(name, owner("try-lock")), LONG_LEASE);

    release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);

    wakeups.assertNoneArrives();
  }

  @Test
  @RequiresFeature({Feature.WAKEUP_PUSH, Feature.READ_WRITE_LOCK})
  void sharedReleaseWithReadersLeftWakesNobody() {
    String name = uniqueName("spi-readers-left");
    LatchkeyBackend readerBackend = open();
    LatchkeyBackend writerBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String reader = owner("reader");
    String lastReader = owner("last-reader");
    String writer = owner("writer");
    long token = acquired(readerBackend, shared(name, reader)).fencingToken();
    long lastToken = acquired(readerBackend, shared(name, lastReader)).fencingToken();
    refused(writerBackend, queued(name, writer, false), LONG_LEASE);

    release(readerBackend, name, reader, token, LockMode.SHARED);
    wakeups.assertNoneArrives();

    release(readerBackend, name, lastReader, lastToken, LockMode.SHARED);
    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(writer));
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void leavingBehindAnExclusiveHolderWakesNobody() {
    String name = uniqueName("spi-leave-held");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String head = owner("head");
    acquired(holderBackend, exclusive(name, owner("holder")));
    refused(waiterBackend, queued(name, head, false), LONG_LEASE);
    refused(waiterBackend, queued(name, owner("next"), false), LONG_LEASE);

    join(waiterBackend.locks().leaveQueue(name, head));

    wakeups.assertNoneArrives();
  }

  @Test
  @RequiresFeature({Feature.WAKEUP_PUSH, Feature.READ_WRITE_LOCK})
  void sharedGrantToAQueuedReaderWakesTheNext() {
    String name = uniqueName("spi-reader-wakes-reader");
    LatchkeyBackend writerBackend = open();
    LatchkeyBackend readerBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String writer = owner("writer");
    String firstReader = owner("first-reader");
    String secondReader = owner("second-reader");
    long token = acquired(writerBackend, exclusive(name, writer)).fencingToken();
    refused(readerBackend, queued(name, firstReader, LockMode.SHARED, false), LONG_LEASE);
    refused(readerBackend, queued(name, secondReader, LockMode.SHARED, false), LONG_LEASE);

    release(writerBackend, name, writer, token, LockMode.EXCLUSIVE);
    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(firstReader));
    acquired(readerBackend, queued(name, firstReader, LockMode.SHARED, false));

    assertThat(wakeups.next())
        .as("the reader granted from the queue wakes the next waiter")
        .isEqualTo(Wakeup.forOwner(secondReader));
    acquired(readerBackend, queued(name, secondReader, LockMode.SHARED, false));
  }

  @Test
  @RequiresFeature({Feature.WAKEUP_PUSH, Feature.READ_WRITE_LOCK})
  void releasingTheExclusiveSideWakesAQueuedReader() {
    String name = uniqueName("spi-downgrade-wakes");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend readerBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String holder = owner("holder");
    String reader = owner("reader");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    acquired(holderBackend, shared(name, holder));
    refused(readerBackend, queued(name, reader, LockMode.SHARED, false), LONG_LEASE);

    release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);

    assertThat(wakeups.next())
        .as("no exclusive holder is left: the queued reader may enter")
        .isEqualTo(Wakeup.forOwner(reader));
    acquired(readerBackend, queued(name, reader, LockMode.SHARED, false));
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void headLeavingTheQueueWakesTheNext() {
    String name = uniqueName("spi-leave-wakes");
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    QueueOfTwo queue = queueOfTwo(name, false);
    queue.releaseHolder();
    LatchkeyBackend waiterBackend = queue.waiterBackend();
    String head = queue.head();
    String next = queue.behind();
    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(head));

    join(waiterBackend.locks().leaveQueue(name, head));

    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(next));
  }

  @Test
  void wokenHeadKeepsAFreeLockDuringItsHandoff() {
    String name = uniqueName("spi-handoff-kept");
    QueueOfTwo queue = queueOfTwo(name, false);
    queue.releaseHolder();
    LatchkeyBackend holderBackend = queue.holderBackend();
    LatchkeyBackend waiterBackend = queue.waiterBackend();
    String head = queue.head();
    String behind = queue.behind();

    // Hand-offs far longer than the test: the lock stays kept for the head.
    LockRequest barger =
        new LockRequest(
            name, owner("barger"), LockMode.EXCLUSIVE, LONG_LEASE, false, 0, LONG_HANDOFF);
    AcquireResult refusal = refused(holderBackend, barger, 0);
    assertThat(refusal.retryAfterMillis())
        .as("the hint of a refusal for a hand-off: when it ends")
        .isPositive()
        .isLessThanOrEqualTo(LONG_HANDOFF);
    refused(waiterBackend, handingOff(name, behind, false, LONG_HANDOFF), 0);
    acquired(waiterBackend, handingOff(name, head, false, LONG_HANDOFF));
  }

  @Test
  @RequiresFeature({Feature.ADMIN, Feature.FAIR_LOCK})
  void wokenHeadThatDoesNotComeMissesItsTurn() {
    String name = uniqueName("spi-handoff-missed");
    QueueOfTwo queue = queueOfTwo(name, true);
    queue.releaseHolder();
    LatchkeyBackend holderBackend = queue.holderBackend();
    LatchkeyBackend waiterBackend = queue.waiterBackend();
    String head = queue.head();
    String behind = queue.behind();

    Awaiting.eventually()
        .until(
            () ->
                join(waiterBackend.locks().tryAcquire(handingOff(name, behind, true, SHORT_LEASE)))
                    .isGranted());

    assertThat(queuedWaiters(holderBackend, name)).as("the head lost its place").isZero();
    refused(waiterBackend, handingOff(name, head, true, LONG_HANDOFF), LONG_LEASE);
    assertThat(queuedWaiters(holderBackend, name)).as("the head queued again").isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void missedTurnWakesTheNextWaiter() {
    String name = uniqueName("spi-handoff-wakes");
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    QueueOfTwo queue = queueOfTwo(name, false);
    queue.releaseHolder();
    long releasedAt = System.nanoTime();
    LatchkeyBackend holderBackend = queue.holderBackend();
    LatchkeyBackend waiterBackend = queue.waiterBackend();
    String head = queue.head();
    String behind = queue.behind();
    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(head));
    // The head's hand-off began when the release was applied, before it answered; by the backend's
    // clock (in milliseconds) it is then older than the barger's 1 ms for certain. A barger sent at
    // once could reach a backend within the same millisecond and find the turn not missed yet: on
    // one server that only costs a retry of the loop below, but a backend of several members (a
    // quorum) judges the turn on each member by its own clock, and could wake the next waiter on a
    // minority while the majority still keeps the lock for the head.
    Awaiting.eventually()
        .until(() -> System.nanoTime() - releasedAt >= Duration.ofMillis(5).toNanos());

    // A barger that counts any hand-off older than 1 ms as missed: refused either way.
    LockRequest barger =
        new LockRequest(name, owner("barger"), LockMode.EXCLUSIVE, LONG_LEASE, false, 0, 1);
    // Each attempt waits for the wake-up it may have caused before trying again, so that a later
    // attempt cannot also count the next head's fresh hand-off as missed.
    @Nullable Wakeup next = null;
    for (int attempt = 0; attempt < 20 && next == null; attempt++) {
      refused(holderBackend, barger, 0);
      next = wakeups.within(Duration.ofMillis(250));
    }

    assertThat(next).isEqualTo(Wakeup.forOwner(behind));
    refused(holderBackend, handingOff(name, owner("late"), false, LONG_HANDOFF), 0);
    acquired(waiterBackend, handingOff(name, behind, false, LONG_HANDOFF));
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void readersMayEnterBesideAWokenReader() {
    String name = uniqueName("spi-handoff-readers");
    LatchkeyBackend writerBackend = open();
    LatchkeyBackend readerBackend = open();
    String writer = owner("writer");
    String reader = owner("reader");
    long token = acquired(writerBackend, exclusive(name, writer)).fencingToken();
    refused(readerBackend, queued(name, reader, LockMode.SHARED, false), LONG_LEASE);
    release(writerBackend, name, writer, token, LockMode.EXCLUSIVE);

    LockRequest newReader =
        new LockRequest(
            name, owner("new-reader"), LockMode.SHARED, LONG_LEASE, false, 0, LONG_HANDOFF);
    acquired(readerBackend, newReader);
    acquired(readerBackend, handingOff(name, reader, LockMode.SHARED, false, LONG_HANDOFF));
  }

  /**
   * A lock held by one backend's owner with two owners of another backend queued behind it, the
   * head first.
   */
  private record QueueOfTwo(
      String name,
      LatchkeyBackend holderBackend,
      LatchkeyBackend waiterBackend,
      String holder,
      long token,
      String head,
      String behind) {
    /** The holder releases: the lock is free and the head is woken. */
    void releaseHolder() {
      release(holderBackend, name, holder, token, LockMode.EXCLUSIVE);
    }
  }

  private QueueOfTwo queueOfTwo(String name, boolean fair) {
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    String holder = owner("holder");
    String head = owner("head");
    String behind = owner("behind");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    refused(waiterBackend, queued(name, head, fair), LONG_LEASE);
    refused(waiterBackend, queued(name, behind, fair), LONG_LEASE);
    return new QueueOfTwo(name, holderBackend, waiterBackend, holder, token, head, behind);
  }
}
