package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.servers.FreezableTcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A backend's check that a hand-over whose reply is lost orphans no hold (ADR 0003, amendment of
 * 2026-11-27): a release that hands the lock over to a waiter of the same client, while a {@link
 * FreezableTcpProxy} holds the server's replies past the operation timeout (the server applied it).
 * The release fails within its bound; the waiter, told nothing was handed over, tries by itself:
 * either it holds the lock once, with a larger fencing token, or its acquire fails too and every
 * grant it may have got is undone. Either way no hold is left that nobody knows of, and the lock
 * ends free for everyone.
 */
public final class LostHandOverReply {
  private static final Duration WAITER_BOUND = Duration.ofSeconds(20);
  private static final Duration SETTLE = Duration.ofSeconds(10);

  private LostHandOverReply() {}

  /**
   * What the client under test needs beside a short operation timeout: a long re-check keeps the
   * waiter asleep (and so claimable by the release) rather than polling into the freeze, and a long
   * queue place outlives the freeze.
   *
   * @param options the client's options so far
   * @return {@code options}, changed
   */
  public static LatchkeyOptions.Builder waiterOptions(LatchkeyOptions.Builder options) {
    return options.recheckInterval(Duration.ofSeconds(10)).queueKeepAlive(Duration.ofSeconds(30));
  }

  /**
   * Runs the check.
   *
   * @param client connected through {@code proxy} only, with {@link #waiterOptions} and a short
   *     operation timeout
   * @param proxy the proxy in front of the server, not frozen
   * @param other a client connected to the server directly, that inspects the lock
   * @param name a lock nobody holds or waits for
   * @param failure what a call whose reply is held fails with
   */
  public static void check(
      Latchkey client,
      FreezableTcpProxy proxy,
      Latchkey other,
      String name,
      Class<? extends BackendUnavailableException> failure)
      throws Exception {
    DistributedLock lock = client.lock(name);
    Lease holder = lock.acquire(Duration.ZERO);
    ExecutorService waiterThread = Executors.newSingleThreadExecutor();
    try {
      Future<Lease> waiting = waiterThread.submit(() -> lock.acquire(WAITER_BOUND));
      await().atMost(SETTLE).until(() -> queuedWaiters(other, name) == 1);

      proxy.freezeReplies();
      assertThatThrownBy(holder::release).isInstanceOf(failure);
      proxy.unfreeze();

      Lease next;
      try {
        next = waiting.get(WAITER_BOUND.toSeconds() + SETTLE.toSeconds(), TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(failure);
        await()
            .atMost(SETTLE)
            .untilAsserted(() -> assertThat(holders(other, name)).as("no orphaned hold").isEmpty());
        assertFree(other, name);
        return;
      }
      assertThat(next.isValid()).isTrue();
      assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
      await()
          .atMost(SETTLE)
          .untilAsserted(
              () ->
                  assertThat(holders(other, name))
                      .singleElement()
                      .satisfies(
                          held -> {
                            assertThat(held.fencingToken()).isEqualTo(next.fencingToken());
                            assertThat(held.holds()).as("no orphaned hold").isEqualTo(1);
                          }));
      next.release();
      assertFree(other, name);
    } finally {
      waiterThread.shutdownNow();
    }
  }

  private static int queuedWaiters(Latchkey client, String name) {
    return client.admin().inspect(name).map(LockInfo::queuedWaiters).orElse(0);
  }

  private static List<HolderInfo> holders(Latchkey client, String name) {
    return client.admin().inspect(name).map(LockInfo::holders).orElse(List.of());
  }

  private static void assertFree(Latchkey other, String name) {
    assertThat(other.lock(name).tryLock()).as("the lock is free afterwards").isTrue();
    other.lock(name).unlock();
  }
}
