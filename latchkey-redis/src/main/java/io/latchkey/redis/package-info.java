/**
 * The Redis backend of latchkey: every primitive as Lua scripts on Redis (standalone, Sentinel or
 * Cluster), over Lettuce. Add this module to the class path and connect with a {@code redis://}
 * URI; see {@link io.latchkey.redis.RedisBackendProvider} for the URI forms and options and {@link
 * io.latchkey.redis.RedisBackend} for what it does on the server.
 */
@NullMarked
package io.latchkey.redis;

import org.jspecify.annotations.NullMarked;
