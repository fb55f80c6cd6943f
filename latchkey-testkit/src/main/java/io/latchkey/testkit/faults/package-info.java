/**
 * A Jepsen-style fault suite for any latchkey backend: worker JVMs take one lock in a loop and
 * write to a {@linkplain io.latchkey.testkit.faults.FencedStore fenced store} while a seeded
 * injector stops, kills and cuts them off and crashes or pauses the server; {@link
 * io.latchkey.testkit.faults.FaultAnalysis} then reports overlapping critical sections (explained
 * by a lease loss the holder was told of, or not), stale writes, repeated fencing tokens, lost
 * counter updates and how long the lock stayed free while someone waited.
 *
 * <p>Start at {@link io.latchkey.testkit.faults.FaultRun}; a backend plugs in through {@link
 * io.latchkey.testkit.faults.ServerControl}.
 */
@NullMarked
package io.latchkey.testkit.faults;

import org.jspecify.annotations.NullMarked;
