/** The {@code latchkey} command line: the flash-sale demo and the tools around the locks. */
@NullMarked
package io.latchkey.cli;

import org.jspecify.annotations.NullMarked;
