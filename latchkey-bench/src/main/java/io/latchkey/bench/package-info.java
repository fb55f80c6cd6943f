/**
 * JMH benchmarks of latchkey. {@link io.latchkey.bench.EngineBenchmark} measures what the engine
 * adds on top of a backend, on the in-memory backend, beside two floors: the backend's SPI called
 * directly and {@link java.util.concurrent.locks.ReentrantLock}. How to run them and the measured
 * numbers are in {@code docs/benchmarks.md}.
 */
@NullMarked
package io.latchkey.bench;

import org.jspecify.annotations.NullMarked;
