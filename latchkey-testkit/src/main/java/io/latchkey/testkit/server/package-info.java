/**
 * Real Redis servers for tests: a standalone server ({@link
 * io.latchkey.testkit.server.RedisTestServer}), a cluster ({@link
 * io.latchkey.testkit.server.RedisClusterTestServer}) and a Sentinel deployment ({@link
 * io.latchkey.testkit.server.RedisSentinelTestServer}).
 *
 * <p>Every server is a {@code redis-server} process started by this package on a free loopback
 * port, with its own temporary directory and no persistence. The package speaks RESP over a plain
 * socket to set servers up and to let tests inspect them; it depends on no Redis client library.
 * Processes are stopped when their owner is closed and, as a last resort, by a JVM shutdown hook.
 * The package never sends a command to a server it did not start: a port is used only after it
 * was found free, and a started server must report the process id of the process we launched.
 *
 * <p>The executable is found by {@link io.latchkey.testkit.server.RedisBinary}: an explicit path,
 * then {@code PATH}, then a binary shipped inside a Maven artifact.
 */
@org.jspecify.annotations.NullMarked
package io.latchkey.testkit.server;
