/**
 * The latchkey conformance kit: abstract JUnit 5 suites that every backend runs. A backend module
 * supplies a {@link io.latchkey.testkit.BackendFixture} in one test class extending {@link
 * io.latchkey.testkit.ConformanceKit}; optional behaviour is gated by the features the fixture
 * declares, and a missing feature is checked to refuse cleanly.
 */
@NullMarked
package io.latchkey.testkit;

import org.jspecify.annotations.NullMarked;
