package io.latchkey.bench;

import java.util.Arrays;
import java.util.stream.LongStream;

/** A growing array of measured values (nanoseconds), filled by one thread and read after it. */
final class LongSamples {
  private long[] values = new long[1 << 12];
  private int count;

  void add(long value) {
    if (count == values.length) {
      values = Arrays.copyOf(values, count * 2);
    }
    values[count++] = value;
  }

  int count() {
    return count;
  }

  LongStream stream() {
    return Arrays.stream(values, 0, count);
  }
}
