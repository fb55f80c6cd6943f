/**
 * The in-memory reference backend: the whole SPI, with real leases that expire by an injectable
 * clock, inside one JVM. It defines by example what every other backend must do (the conformance
 * kit runs against it), and it is what users' unit tests can run against.
 */
@NullMarked
package io.latchkey.memory;

import org.jspecify.annotations.NullMarked;
