/**
 * The latchkey API: distributed locks and synchronizers with one shape over every backend.
 *
 * <p>Start at {@link io.latchkey.Latchkey}: {@link io.latchkey.Latchkey#connect(String)} picks a
 * backend by URI scheme and hands out the primitives ({@link io.latchkey.DistributedLock}, fair
 * lock, {@link io.latchkey.DistributedMutex}, {@link io.latchkey.DistributedReadWriteLock}, {@link
 * io.latchkey.DistributedSemaphore}, {@link io.latchkey.LeasedSemaphore}, {@link
 * io.latchkey.DistributedCountDownLatch}); {@link io.latchkey.MultiLock} composes locks of any
 * backends.
 */
@NullMarked
package io.latchkey;

import org.jspecify.annotations.NullMarked;
