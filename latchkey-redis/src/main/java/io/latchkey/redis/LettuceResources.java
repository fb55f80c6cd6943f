package io.latchkey.redis;

import io.lettuce.core.resource.ClientResources;
import org.jspecify.annotations.Nullable;

/**
 * Where the Lettuce clients of one backend get their event loops and timers: latchkey's own
 * resources, shared by every backend of the JVM that was opened from a URI ({@link
 * SharedClientResources}, shut down with the last of them), or the resources of an application's
 * client ({@link RedisBackend#builder}), which belong to the application and are never shut down by
 * latchkey.
 *
 * @param applications the application's resources, or null for latchkey's own
 */
record LettuceResources(@Nullable ClientResources applications) {
  /** latchkey's own, counted resources. */
  static LettuceResources shared() {
    return new LettuceResources(null);
  }

  /** Once per backend, when it opens. */
  ClientResources acquire() {
    ClientResources given = applications;
    return given != null ? given : SharedClientResources.acquire();
  }

  /** Once per backend, when it closes or fails to open. */
  void release() {
    if (applications == null) {
      SharedClientResources.release();
    }
  }
}
