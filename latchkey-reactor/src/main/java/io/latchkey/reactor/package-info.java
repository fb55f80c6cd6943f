/**
 * Reactor forms of latchkey's primitives: {@link io.latchkey.reactor.Reactive#of} wraps a lock,
 * mutex, semaphore, leased semaphore, count-down latch or multi-lock, and every asynchronous
 * operation of it becomes a {@code Mono} that starts when subscribed and gives back what it got
 * when cancelled.
 */
@NullMarked
package io.latchkey.reactor;

import org.jspecify.annotations.NullMarked;
