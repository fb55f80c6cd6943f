package io.latchkey.internal;

import io.latchkey.Feature;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.WakeupBus;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cooperative revocation for one client ({@link Feature#REVOCATION}): sending requests to the
 * holders of a lock, and receiving those aimed at this client's grants.
 *
 * <p>The client subscribes to its requests once, when it opens, without waiting for the answer, so
 * that opening costs no round trip; the first handler registered waits until the subscription is
 * active, so that a request sent after {@code onRevocationRequested} returned is never missed. A
 * subscription that failed (the backend was down) is tried again by the next registration. Requests
 * go to the {@link GrantLedger}, which finds the grant and runs its handlers on the callback
 * executor: the backend's thread that delivered the request only looks the grant up.
 */
final class Revocations {
  private static final Logger LOG = LoggerFactory.getLogger(Revocations.class);

  private final LatchkeyClient client;
  private @Nullable CompletableFuture<WakeupBus.Subscription> subscription;

  Revocations(LatchkeyClient client) {
    this.client = client;
  }

  /** Starts listening for requests if the backend has the feature; does not wait. */
  @SuppressWarnings("FutureReturnValueIgnored") // kept in the field and awaited by registrations
  void start() {
    if (client.features().contains(Feature.REVOCATION)) {
      subscription();
    }
  }

  /** Waits until this client receives requests; before a handler is registered. */
  void awaitListening() {
    client.require(Feature.REVOCATION);
    Blocking.join(subscription());
  }

  private synchronized CompletableFuture<WakeupBus.Subscription> subscription() {
    CompletableFuture<WakeupBus.Subscription> current = subscription;
    if (current == null || current.isCompletedExceptionally()) {
      LatchkeyBackend backend = client.backend();
      GrantLedger ledger = client.ledger();
      current =
          client
              .calls()
              .call(
                  () -> "listen for revocation requests",
                  () -> backend.subscribeRevocations(ledger::revocationRequested));
      subscription = current;
    }
    return current;
  }

  /**
   * Asks the holders of a lock to give it up.
   *
   * @return true if anyone held it
   */
  boolean request(String kind, String name) {
    client.require(Feature.REVOCATION);
    int asked =
        Blocking.join(
            client
                .calls()
                .call(
                    () -> "ask the holders of " + kind + " '" + name + "' to give it up",
                    () -> client.backend().locks().requestRevocation(name)));
    return asked > 0;
  }

  /** Stops listening (best effort: the backend closes right after). */
  @SuppressWarnings("FutureReturnValueIgnored") // best effort; the backend closes next
  synchronized void stop() {
    CompletableFuture<WakeupBus.Subscription> current = subscription;
    if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
      current
          .join()
          .unsubscribe()
          .exceptionally(
              failure -> {
                LOG.debug("could not stop listening for revocation requests: {}", failure);
                return null;
              });
    }
  }
}
