/**
 * Quorum locks: a backend made of N independent member backends (Redis servers, in-memory servers,
 * any {@link io.latchkey.spi.LatchkeyBackend} that keeps a {@link io.latchkey.spi.FenceStore}),
 * where a lock is held when a majority of the members granted it within its validity. Open one with
 * {@code Latchkey.connect("quorum:redis://a:6379,redis://b:6379,redis://c:6379")} or build one with
 * {@link io.latchkey.quorum.Quorum#builder()}. How it works, and what it promises: docs/backends/
 * quorum.md and docs/adr/0009-quorum-fencing.md.
 */
@NullMarked
package io.latchkey.quorum;

import org.jspecify.annotations.NullMarked;
