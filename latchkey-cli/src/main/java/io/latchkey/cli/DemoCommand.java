package io.latchkey.cli;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey demo}: the flash sale of the mission. Buyers race for a small stock; without a
 * lock the stock is oversold, with a distributed lock (or a semaphore of the stock) it never is.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Flash sale: buyer threads race for a stock of items, with no lock, a reentrant lock,",
      "a fair lock and a semaphore checkout, and print sold, oversold, throughput and waits."
    })
final class DemoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--backend",
      description = "Backend URI (default: $LATCHKEY_URL, else the in-memory backend 'memory:').")
  @Nullable String backend;

  @Option(
      names = {"-k", "--stock"},
      defaultValue = "200",
      description = "Items in stock (default: ${DEFAULT-VALUE}).")
  int stock;

  @Option(
      names = {"-t", "--threads"},
      defaultValue = "8",
      description = "Buyer threads (default: ${DEFAULT-VALUE}).")
  int threads;

  @Override
  public Integer call() {
    if (stock < 1 || stock > 1_000_000) {
      throw new IllegalArgumentException("--stock must be between 1 and 1000000, was " + stock);
    }
    if (threads < 1 || threads > 256) {
      throw new IllegalArgumentException("--threads must be between 1 and 256, was " + threads);
    }
    String uri = BackendUris.resolve(backend);
    PrintWriter out = spec.commandLine().getOut();
    out.printf(
        Locale.ROOT, "Flash sale on %s: %d items, %d buyer threads%n%n", uri, stock, threads);
    out.flush();
    List<FlashSale.Result> results = new ArrayList<>();
    LatchkeyOptions options = LatchkeyOptions.builder().closeOnShutdown(true).build();
    try (Latchkey latchkey = Latchkey.connect(uri, options)) {
      FlashSale sale = new FlashSale(latchkey, stock, threads);
      for (FlashSale.Guard guard : FlashSale.Guard.values()) {
        try (ProgressBar bar = ProgressBar.forTerminal(guard.label(), stock)) {
          results.add(sale.run(guard, bar::update));
        }
      }
    }
    Table table = new Table("run", "sold", "oversold", "buys/s", "p50 wait", "p99 wait", "time");
    for (FlashSale.Result r : results) {
      table.row(
          r.guard().label(),
          Long.toString(r.sold()),
          Long.toString(r.oversold()),
          String.format(Locale.ROOT, "%.0f", r.throughputPerSecond()),
          Table.millis(r.p50WaitNanos()),
          Table.millis(r.p99WaitNanos()),
          Table.millis(r.elapsedNanos()));
    }
    table.print(out);
    out.println();
    out.println(
        "Without a lock buyers read the same stock and sell it twice; every guarded run sells"
            + " exactly the stock.");
    out.flush();
    return ExitCodes.OK;
  }
}
