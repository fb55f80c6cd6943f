/**
 * Real Redis servers for tests: a standalone server ({@link io.latchkey.servers.RedisTestServer}),
 * a cluster ({@link io.latchkey.servers.RedisClusterTestServer}) and a Sentinel deployment ({@link
 * io.latchkey.servers.RedisSentinelTestServer}).
 *
 * <p>Every server is a {@code redis-server} process started by this package on a free loopback
 * port, with its own temporary directory and no persistence. The package speaks RESP over a plain
 * socket to set servers up and to let tests inspect them; it depends on no Redis client library.
 * Processes are stopped when their owner is closed and, as a last resort, by a JVM shutdown hook.
 * The package leaves servers it did not start alone, such as a Redis already on 6379: it picks only
 * ports it has just found free (never below 20000), and a started server must report, in {@code
 * INFO server}, the process id of the process we launched before any other command is sent. (If
 * another process takes the port in the instant between the check and our server binding it, the
 * start-up probe, read-only {@code PING} and {@code INFO}, reaches that process, finds the wrong
 * process id, and the start is retried on another port.)
 *
 * <p>The executable is found by {@link io.latchkey.servers.RedisBinary}: an explicit path, then
 * {@code PATH}, then a binary shipped inside a Maven artifact. {@link
 * io.latchkey.servers.FakedClock} starts a server with a wall clock that the test can step, and
 * {@link io.latchkey.servers.FreezableTcpProxy} puts a client behind a network that can go silent.
 */
@org.jspecify.annotations.NullMarked
package io.latchkey.servers;
