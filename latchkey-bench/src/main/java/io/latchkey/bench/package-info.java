/**
 * JMH benchmarks of latchkey. {@link io.latchkey.bench.EngineBenchmark} measures what the engine
 * adds on top of a backend, on the in-memory backend, beside two floors: the backend's SPI called
 * directly and {@link java.util.concurrent.locks.ReentrantLock}. {@link
 * io.latchkey.bench.RedisBenchmarks} runs the Redis comparison in one go on a Redis server it
 * starts itself: {@link io.latchkey.bench.RedisLockBenchmark} (latency, throughput) beside a floor
 * of two round trips and beside Redisson's {@code RLock}, then the Redis commands per cycle under
 * contention and the watchdog's round trips. How to run them and the measured numbers are in {@code
 * docs/benchmarks.md}.
 */
@NullMarked
package io.latchkey.bench;

import org.jspecify.annotations.NullMarked;
