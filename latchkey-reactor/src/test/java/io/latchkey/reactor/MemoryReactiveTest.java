package io.latchkey.reactor;

/** The Reactor forms on the in-memory backend. */
class MemoryReactiveTest extends ReactiveContract {
  @Override
  String uri() {
    return "memory:reactor-tests";
  }
}
