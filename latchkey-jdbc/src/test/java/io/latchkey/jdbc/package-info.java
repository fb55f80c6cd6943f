@NullMarked
package io.latchkey.jdbc;

import org.jspecify.annotations.NullMarked;
