package io.latchkey.examples;

import java.util.ArrayList;
import java.util.List;

/**
 * Test support: a stand-in for the resource an example protects (a file, a table, a remote API). It
 * records what was written and with which fencing token.
 */
final class Journal {
  private final List<String> entries = new ArrayList<>();
  private final List<Long> tokens = new ArrayList<>();

  synchronized void write(String entry) {
    write(entry, 0);
  }

  synchronized void write(String entry, long fencingToken) {
    entries.add(entry);
    tokens.add(fencingToken);
  }

  synchronized List<String> entries() {
    return List.copyOf(entries);
  }

  synchronized List<Long> tokens() {
    return List.copyOf(tokens);
  }
}
