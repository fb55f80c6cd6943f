/** The suites of the conformance kit, one per primitive or property. */
@NullMarked
package io.latchkey.testkit.contract;

import org.jspecify.annotations.NullMarked;
