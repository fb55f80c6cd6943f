package io.latchkey.spi;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * The channel through which releases wake waiting clients. The engine subscribes once per resource
 * per client and shares the subscription between its local waiters.
 */
public interface WakeupBus {
  /** For backends that cannot push: subscribing does nothing and waiters poll with back-off. */
  WakeupBus NONE =
      (type, name, listener) ->
          CompletableFuture.completedFuture(() -> CompletableFuture.completedFuture(null));

  /**
   * Starts delivering wake-ups of one resource to {@code listener}. The stage completes once the
   * subscription is active, so that a release after that moment is not missed.
   *
   * @param type the resource type
   * @param name the resource name
   * @param listener receives wake-ups; must not block
   * @return the active subscription
   */
  CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener);

  /** An active subscription. */
  @FunctionalInterface
  interface Subscription {
    /**
     * @return completes when no more wake-ups will be delivered
     */
    CompletionStage<Void> unsubscribe();
  }
}
