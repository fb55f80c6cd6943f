package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** {@code @ScheduledLock} jobs: one run per tick across instances, and the at-least hold. */
class ScheduledLockTest extends RedisBacked {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
          .withPropertyValues("latchkey.close-on-shutdown=false");

  @Test
  void threeInstancesOnOneRedisRunEachTickOnce() {
    Report.runsByTick.clear();
    ApplicationContextRunner instance =
        runner
            .withUserConfiguration(Scheduling.class)
            .withPropertyValues("latchkey.url=" + server().uri());
    instance
        .withPropertyValues("instance=a")
        .run(
            a ->
                instance
                    .withPropertyValues("instance=b")
                    .run(
                        b ->
                            instance
                                .withPropertyValues("instance=c")
                                .run(
                                    c ->
                                        await()
                                            .atMost(Duration.ofSeconds(30))
                                            .until(() -> Report.runsByTick.size() >= 4))));
    // Every tick (every second second) ran on one instance only.
    assertThat(Report.runsByTick.values()).allSatisfy(runs -> assertThat(runs).hasSize(1));
  }

  @Test
  void aQuickRunKeepsTheLockForLockAtLeastFor() {
    runner
        .withUserConfiguration(Quick.class)
        .withPropertyValues("latchkey.url=memory:scheduled")
        .run(
            context -> {
              QuickJob job = context.getBean(QuickJob.class);
              job.run();
              assertThat(QuickJob.runs).hasValue(1);
              job.run(); // within lockAtLeastFor: skipped
              assertThat(QuickJob.runs).hasValue(1);
              await()
                  .atMost(Duration.ofSeconds(20))
                  .pollInterval(Duration.ofMillis(200))
                  .until(
                      () -> {
                        job.run();
                        return QuickJob.runs.get() == 2;
                      });
            });
  }

  @Test
  void lockAtLeastForLongerThanLockAtMostForFailsTheStart() {
    runner
        .withUserConfiguration(Inverted.class)
        .withPropertyValues("latchkey.url=memory:")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("lockAtLeastFor (5s) must not be longer than"));
  }

  /** The job: records the tick it ran in and the instance that ran it. */
  public static class Report {
    static final Map<Long, List<String>> runsByTick = new ConcurrentHashMap<>();
    private final String instance;

    Report(String instance) {
      this.instance = instance;
    }

    @Scheduled(cron = "*/2 * * * * *")
    @ScheduledLock(name = "jobs/report", lockAtMostFor = "10s", lockAtLeastFor = "1500ms")
    public void run() {
      runsByTick
          .computeIfAbsent(
              System.currentTimeMillis() / 2000,
              tick -> Collections.synchronizedList(new CopyOnWriteArrayList<>()))
          .add(instance);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class Scheduling {
    @Bean
    Report report(Environment environment) {
      return new Report(environment.getRequiredProperty("instance"));
    }
  }

  /** A job that ends at once. */
  public static class QuickJob {
    static final AtomicInteger runs = new AtomicInteger();

    @ScheduledLock(lockAtMostFor = "20s", lockAtLeastFor = "3s")
    public void run() {
      runs.incrementAndGet();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Quick {
    @Bean
    QuickJob quickJob() {
      QuickJob.runs.set(0);
      return new QuickJob();
    }
  }

  /** A job whose bounds are the wrong way round. */
  public static class InvertedJob {
    @ScheduledLock(lockAtMostFor = "1s", lockAtLeastFor = "5s")
    public void run() {}
  }

  @Configuration(proxyBeanMethods = false)
  static class Inverted {
    @Bean
    InvertedJob invertedJob() {
      return new InvertedJob();
    }
  }
}
