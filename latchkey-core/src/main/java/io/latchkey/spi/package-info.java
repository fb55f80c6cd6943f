/**
 * The backend SPI: the few atomic operations on named lease records that a backend must offer.
 * Policy (waiting, timeouts, interrupts, the watchdog, lease-loss detection, validation) lives once
 * in the engine and is not repeated here.
 *
 * <p>The model behind every operation: a named resource with a capacity, whose holders each hold
 * some permits in a mode (shared or exclusive) under a lease kept by the backend's own clock. Each
 * operation is one atomic step on the backend (one script, one statement or short transaction, one
 * multi-op). Every method returns at once with a stage; the engine bounds how long it waits for it.
 * A backend whose own bound ran out first (a socket read timeout set to the time left) fails the
 * stage with a {@link java.util.concurrent.TimeoutException} or a {@link
 * java.net.SocketTimeoutException} among its causes, and the caller sees the same {@link
 * io.latchkey.BackendTimeoutException} as when the engine's bound passes. See docs/adr/0001-spi.md
 * for how Redis, SQL databases and ZooKeeper map onto it.
 *
 * <p>Backends are found by URI scheme through {@link java.util.ServiceLoader} of {@link
 * io.latchkey.spi.BackendProvider}, or passed to {@link io.latchkey.Latchkey#using} as a {@link
 * io.latchkey.spi.BackendFactory}.
 */
@NullMarked
package io.latchkey.spi;

import org.jspecify.annotations.NullMarked;
