package io.latchkey.internal;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.Feature;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/** A count-down latch: awaiting is the engine's waiting loop on "count is zero". */
final class CountDownLatchHandle implements DistributedCountDownLatch {
  private final LatchkeyClient client;
  private final String name;

  CountDownLatchHandle(LatchkeyClient client, String name) {
    this.client = client;
    this.name = name;
  }

  private LatchStore store() {
    return client.backend().latches();
  }

  private String subject() {
    return "latch '" + name + "'";
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean trySetCount(long count) {
    Arguments.count(count);
    return Blocking.join(
        client
            .calls()
            .call(() -> "set the count of " + subject(), () -> store().trySetCount(name, count)));
  }

  @Override
  public void countDown() {
    Blocking.join(countDownAsync());
  }

  @Override
  public CompletableFuture<Long> countDownAsync() {
    return client.calls().call(() -> "count down " + subject(), () -> store().countDown(name));
  }

  @Override
  public long count() {
    return Blocking.join(
        client.calls().call(() -> "read the count of " + subject(), () -> store().count(name)));
  }

  @Override
  public void await() throws InterruptedException {
    Blocking.await(start(-1));
  }

  @Override
  public CompletionStage<Void> awaitAsync() {
    return client.toCaller(Results.map(start(-1), done -> null));
  }

  @Override
  public boolean await(Duration wait) throws InterruptedException {
    Arguments.wait(wait);
    return Blocking.await(start(wait.toNanos())) != null;
  }

  @Override
  public CompletionStage<Boolean> awaitAsync(Duration wait) {
    Arguments.wait(wait);
    return client.toCaller(Results.map(start(wait.toNanos()), done -> done != null));
  }

  private CompletableFuture<@Nullable Boolean> start(long waitNanos) {
    client.ensureOpen();
    Acquisition.WaitPlan plan =
        Acquisition.WaitPlan.ownerless(
            ResourceType.COUNT_DOWN_LATCH, name, true, waitNanos, client.options());
    return new Acquisition<>(
            client,
            plan,
            Acquisition.Strategy.<Boolean>of(
                () ->
                    client
                        .calls()
                        .call(() -> "read the count of " + subject(), () -> store().count(name))
                        .thenApply(
                            count ->
                                count == 0
                                    ? Acquisition.Attempt.granted(Boolean.TRUE)
                                    : Acquisition.Attempt.<Boolean>busy(-1)),
                done -> {}))
        .start();
  }

  @Override
  public boolean delete() {
    return client.callNeeding(
        Feature.DELETE_RECORDS, () -> "delete " + subject(), () -> store().deleteLatch(name));
  }

  @Override
  public boolean isExists() {
    return count() > 0;
  }

  @Override
  public String toString() {
    return "CountDownLatch['" + name + "' on " + client.backendDescription() + "]";
  }
}
