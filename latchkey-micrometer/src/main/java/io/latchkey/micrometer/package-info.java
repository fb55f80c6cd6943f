/**
 * Micrometer metrics and observations for latchkey: {@link io.latchkey.micrometer.LatchkeyMetrics}.
 */
@NullMarked
package io.latchkey.micrometer;

import org.jspecify.annotations.NullMarked;
