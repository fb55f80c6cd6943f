package io.latchkey.micrometer;

/** The metrics on the in-memory backend. */
class MemoryMetricsTest extends MetricsScenario {
  @Override
  String uri() {
    return "memory:";
  }

  @Override
  String backendTag() {
    return "memory";
  }
}
