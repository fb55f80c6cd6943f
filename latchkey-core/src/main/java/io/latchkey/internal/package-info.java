/**
 * The engine behind the public API: owners, holds, the watchdog, waiting, and the bounded calls to
 * the backend. Not an API: nothing here is stable.
 */
@NullMarked
package io.latchkey.internal;

import org.jspecify.annotations.NullMarked;
