package io.latchkey.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce resources (event loops, timers) that every Redis backend of this JVM shares, as
 * Lettuce recommends: created by the first backend that opens, shut down when the last one closes.
 *
 * <p>The pub/sub connection reconnects by itself after 1, 2, 4 … ms, at most a second apart, so
 * that wake-ups resume soon after a Redis restart or fail-over.
 */
final class SharedClientResources {
  private static final Duration LONGEST_RECONNECT_DELAY = Duration.ofSeconds(1);

  private static @Nullable ClientResources resources;
  private static int users;

  private SharedClientResources() {}

  static synchronized ClientResources acquire() {
    ClientResources shared = resources;
    if (shared == null) {
      shared =
          DefaultClientResources.builder()
              .reconnectDelay(
                  Delay.exponential(
                      Duration.ZERO, LONGEST_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
              .build();
      resources = shared;
    }
    users++;
    return shared;
  }

  // Futures left unread on purpose: the last user lets the event loops shut down in the background.
  @SuppressWarnings("FutureReturnValueIgnored")
  static synchronized void release() {
    ClientResources shared = resources;
    if (shared != null && --users == 0) {
      resources = null;
      shared.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }
}
