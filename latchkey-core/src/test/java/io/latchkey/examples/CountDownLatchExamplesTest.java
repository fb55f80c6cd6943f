package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/count-down-latch.md. */
class CountDownLatchExamplesTest {
  private static final String URI = "memory:docs-count-down-latch";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey worker = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    worker.close();
  }

  @Test
  void usage() throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(3);
    try {
      // tag::usage[]
      // The coordinator sets the count before it starts the work.
      DistributedCountDownLatch shardsDone = latchkey.countDownLatch("reindex/2024-06/shards");
      assertThat(shardsDone.trySetCount(3)).isTrue();

      // Each worker, in any process, counts down once when its shard is done.
      for (int shard = 0; shard < 3; shard++) {
        workers.execute(() -> worker.countDownLatch("reindex/2024-06/shards").countDown());
      }

      // The coordinator waits for all three.
      assertThat(shardsDone.await(Duration.ofSeconds(10))).isTrue();
      // end::usage[]
    } finally {
      workers.shutdownNow();
    }
  }

  @Test
  void awaitTimesOut() throws Exception {
    // tag::timeout[]
    DistributedCountDownLatch ready = latchkey.countDownLatch("deploy/ready");
    ready.trySetCount(2);
    worker.countDownLatch("deploy/ready").countDown();
    assertThat(ready.await(Duration.ofMillis(100))).isFalse(); // one is still missing
    assertThat(ready.count()).isEqualTo(1);
    // end::timeout[]
    ready.countDown();
  }

  @Test
  void awaitAsync() throws Exception {
    // tag::async[]
    DistributedCountDownLatch ready = latchkey.countDownLatch("deploy/async");
    ready.trySetCount(1);
    CompletableFuture<Boolean> done =
        ready.awaitAsync(Duration.ofSeconds(10)).toCompletableFuture();
    worker.countDownLatch("deploy/async").countDown();
    assertThat(done.get(5, TimeUnit.SECONDS)).isTrue();
    // end::async[]
  }

  @Test
  void setAgainAfterZero() throws Exception {
    // tag::reuse[]
    DistributedCountDownLatch round = latchkey.countDownLatch("game/round");
    assertThat(round.trySetCount(2)).isTrue();
    assertThat(round.trySetCount(5)).isFalse(); // still counting down from 2
    round.countDown();
    round.countDown();
    round.countDown(); // at zero, counting down does nothing
    assertThat(round.count()).isZero();
    assertThat(round.trySetCount(5)).isTrue(); // the next round
    // end::reuse[]
  }

  @Test
  void aLatchThatWasNeverSetIsOpen() throws Exception {
    // tag::unset[]
    DistributedCountDownLatch notYet = latchkey.countDownLatch("deploy/never-set");
    assertThat(notYet.count()).isZero();
    assertThat(notYet.await(Duration.ofSeconds(10))).isTrue(); // at once: zero means open
    // end::unset[]
  }

  @Test
  void untimedAwaitAndDelete() throws Exception {
    // tag::await-delete[]
    DistributedCountDownLatch ready = latchkey.countDownLatch("deploy/ready");
    ready.trySetCount(2);
    CompletableFuture<Void> opened =
        worker.countDownLatch("deploy/ready").awaitAsync().toCompletableFuture();

    assertThat(ready.isExists()).isTrue();
    assertThat(ready.delete()).isTrue(); // gives up on the count: every waiter wakes as at zero
    opened.get(5, TimeUnit.SECONDS);
    ready.await(); // no bound on the wait; returns at once for a latch that is not set
    assertThat(ready.isExists()).isFalse();
    // end::await-delete[]
  }
}
