package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @Locked} methods of two application contexts (two latchkey clients, as two instances of a
 * service would be) on one real Redis.
 */
class LockedTest extends RedisBacked {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
          .withUserConfiguration(Services.class);

  private ApplicationContextRunner onRedis() {
    return runner.withPropertyValues(
        "latchkey.url=" + server().uri(), "latchkey.close-on-shutdown=false");
  }

  @BeforeEach
  void reset() {
    Orders.counter = 0;
    Orders.tokens.clear();
  }

  @Test
  void twoContextsNeverRunTheMethodAtOnce() {
    onRedis()
        .run(
            first ->
                onRedis()
                    .run(
                        second -> {
                          List<Orders> instances =
                              List.of(first.getBean(Orders.class), second.getBean(Orders.class));
                          ExecutorService threads = Executors.newFixedThreadPool(4);
                          try {
                            List<Future<?>> done = new ArrayList<>();
                            for (int t = 0; t < 4; t++) {
                              Orders orders = instances.get(t % 2);
                              done.add(
                                  threads.submit(
                                      () -> {
                                        for (int i = 0; i < 25; i++) {
                                          orders.increment(new Order("42"), null);
                                        }
                                      }));
                            }
                            for (Future<?> each : done) {
                              each.get();
                            }
                          } finally {
                            threads.shutdownNow();
                          }
                          // An unsynchronised read-modify-write: exact only under the lock.
                          assertThat(Orders.counter).isEqualTo(100);
                          // Each call had the grant's lease, and every grant a new token.
                          assertThat(Orders.tokens).hasSize(100).doesNotHaveDuplicates();
                        }));
  }

  @Test
  void theLockIsHeldUntilTheReturnedStageCompletes() {
    onRedis()
        .run(
            first ->
                onRedis()
                    .run(
                        second -> {
                          Orders a = first.getBean(Orders.class);
                          Orders b = second.getBean(Orders.class);
                          CompletableFuture<String> work = new CompletableFuture<>();
                          CompletableFuture<String> result = a.ship("7", work);
                          assertThat(result).isNotDone();
                          // Held: the other instance skips, or fails when it must not skip.
                          assertThat(b.shipIfFree("7")).isEmpty();
                          assertThatThrownBy(() -> b.shipOrFail("7"))
                              .isInstanceOf(LockTimeoutException.class);
                          work.complete("shipped");
                          assertThat(result.get()).isEqualTo("shipped");
                          await()
                              .atMost(Duration.ofSeconds(10))
                              .until(() -> b.shipIfFree("7").isPresent());
                          assertThat(b.shipOrFail("7")).isEqualTo("ran");
                          // The lease was given back: nothing is held any more.
                          assertThat(first.getBean(Latchkey.class).admin().inspect("shipments/7"))
                              .isEmpty();
                        }));
  }

  @Test
  void aFailedStageReleasesTheLockAndKeepsItsFailure() {
    onRedis()
        .run(
            context -> {
              Orders orders = context.getBean(Orders.class);
              CompletableFuture<String> work = new CompletableFuture<>();
              CompletableFuture<String> result = orders.ship("8", work);
              work.completeExceptionally(new IllegalStateException("boom"));
              assertThatThrownBy(result::get).hasRootCauseMessage("boom");
              assertThat(orders.shipIfFree("8")).contains("ran");
            });
  }

  @Test
  void readersShareAndAWriterExcludesThem() {
    onRedis()
        .run(
            first ->
                onRedis()
                    .run(
                        second -> {
                          Orders a = first.getBean(Orders.class);
                          Orders b = second.getBean(Orders.class);
                          CompletableFuture<String> reading = new CompletableFuture<>();
                          CompletableFuture<String> held = a.read("c", reading);
                          assertThat(b.readNow("c")).isTrue();
                          assertThat(b.writeNow("c")).isNull(); // skipped
                          reading.complete("done");
                          held.get();
                          assertThat(b.writeNow("c")).isTrue();
                        }));
  }

  @Test
  void aVariableThatIsNotAParameterFailsTheStart() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.close-on-shutdown=false")
        .withUserConfiguration(Misspelt.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("@Locked on io.latchkey.spring.LockedTest$Typo.place")
                    .hasStackTraceContaining("refers to #ordr")
                    .hasStackTraceContaining("it has order"));
  }

  @Test
  void aTemplateThatDoesNotParseFailsTheStart() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.close-on-shutdown=false")
        .withUserConfiguration(Unparsable.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("is not a valid template"));
  }

  @Test
  void skipOnAMethodReturningAPrimitiveFailsTheStart() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.close-on-shutdown=false")
        .withUserConfiguration(SkipPrimitive.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "onNotAcquired = SKIP needs a method that can return null"));
  }

  @Test
  void aMalformedWaitTimeFailsTheStart() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.close-on-shutdown=false")
        .withUserConfiguration(BadDuration.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("waitTime = \"soon\" is not a duration"));
  }

  /** An order, as an application would have. */
  public record Order(String id) {}

  /** The bean under test; its state is static so that both contexts' instances share it. */
  public static class Orders {
    static int counter;
    static final List<Long> tokens = Collections.synchronizedList(new ArrayList<>());

    @Locked("orders/#{#order.id}")
    public void increment(Order order, @Nullable Lease lease) {
      if (lease == null || CurrentLease.get() != lease) {
        throw new AssertionError("the method did not get its lease");
      }
      int seen = counter;
      Thread.yield();
      counter = seen + 1;
      tokens.add(lease.fencingToken());
    }

    @Locked("shipments/#{#id}")
    public CompletableFuture<String> ship(String id, CompletableFuture<String> work) {
      return work;
    }

    @Locked(value = "shipments/#{#p0}", waitTime = "0", onNotAcquired = Locked.OnNotAcquired.SKIP)
    public Optional<String> shipIfFree(String id) {
      return Optional.of("ran");
    }

    @Locked(value = "shipments/#{#p0}", waitTime = "100ms")
    public String shipOrFail(String id) {
      return "ran";
    }

    @Locked(value = "catalog/#{#p0}", mode = Locked.Mode.READ)
    public CompletableFuture<String> read(String name, CompletableFuture<String> work) {
      return work;
    }

    @Locked(
        value = "catalog/#{#p0}",
        mode = Locked.Mode.READ,
        waitTime = "0",
        onNotAcquired = Locked.OnNotAcquired.SKIP)
    public @Nullable Boolean readNow(String name) {
      return true;
    }

    @Locked(
        value = "catalog/#{#p0}",
        mode = Locked.Mode.WRITE,
        waitTime = "0",
        onNotAcquired = Locked.OnNotAcquired.SKIP)
    public @Nullable Boolean writeNow(String name) {
      return true;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Services {
    @Bean
    Orders orders() {
      return new Orders();
    }
  }

  /** A misspelt variable. */
  public static class Typo {
    @Locked("orders/#{#ordr.id}")
    public void place(Order order) {}
  }

  @Configuration(proxyBeanMethods = false)
  static class Misspelt {
    @Bean
    Typo typo() {
      return new Typo();
    }
  }

  /** A template that does not parse. */
  public static class BrokenTemplate {
    @Locked("orders/#{#order.}")
    public void place(Order order) {}
  }

  @Configuration(proxyBeanMethods = false)
  static class Unparsable {
    @Bean
    BrokenTemplate broken() {
      return new BrokenTemplate();
    }
  }

  /** SKIP where null cannot be returned. */
  public static class Counting {
    @Locked(value = "count", onNotAcquired = Locked.OnNotAcquired.SKIP)
    public int count() {
      return 1;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class SkipPrimitive {
    @Bean
    Counting counting() {
      return new Counting();
    }
  }

  /** A wait that is not a duration. */
  public static class Waiting {
    @Locked(value = "waiting", waitTime = "soon")
    public void work() {}
  }

  @Configuration(proxyBeanMethods = false)
  static class BadDuration {
    @Bean
    Waiting waiting() {
      return new Waiting();
    }
  }
}
