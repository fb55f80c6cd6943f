package io.latchkey.spring;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Up when latchkey's backend answers: one look-up of a lock record (with {@link Feature#ADMIN}),
 * else one try of a mutex, released at once. Each is bounded by {@code latchkey.operation-timeout}.
 */
public class LatchkeyHealthIndicator extends AbstractHealthIndicator {
  private static final String PROBE = "latchkey/health-probe";
  private final Latchkey latchkey;

  /**
   * @param latchkey the client whose backend is checked
   */
  public LatchkeyHealthIndicator(Latchkey latchkey) {
    super("latchkey health check failed");
    this.latchkey = latchkey;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    if (latchkey.features().contains(Feature.ADMIN)) {
      var unused = latchkey.admin().inspect(PROBE);
    } else {
      latchkey.mutex(PROBE).tryAcquire().ifPresent(io.latchkey.Lease::release);
    }
    builder
        .up()
        .withDetail("backend", latchkey.backendDescription())
        .withDetail("clientId", latchkey.clientId());
  }
}
