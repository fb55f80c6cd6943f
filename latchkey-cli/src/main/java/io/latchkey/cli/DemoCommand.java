package io.latchkey.cli;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey demo}: the flash sale of the mission. Buyers in several worker processes race for
 * a small stock; without a lock the stock is oversold, with a distributed lock (or a semaphore of
 * the stock) it never is. Without a backend it starts an embedded {@code redis-server} and stops it
 * afterwards, and a keyword instead of a URI ({@code --backend postgres}) starts that server
 * ({@link DemoServer}); on the in-process {@code memory:} backend the buyers are threads of one
 * JVM. The demo deletes the semaphore it made, where the backend can ({@link
 * Feature#DELETE_RECORDS}).
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    header =
        "Flash-sale demo: buyers in worker processes race for a stock, with and without locks.",
    description =
        "Flash sale: buyers in several worker processes race for a stock of items, with "
            + "no lock, a reentrant lock, a fair lock and a semaphore checkout, and the results "
            + "are printed: sold, oversold, throughput and waits. Without --backend (or "
            + "LATCHKEY_URL) it starts an embedded redis-server (from PATH, else the one "
            + "shipped with latchkey) and stops it afterwards; --backend postgres, mariadb or "
            + "zookeeper (or redis) starts that server instead (PostgreSQL and MariaDB from "
            + "the binaries installed on this machine). On memory: the buyers are "
            + "threads of this process, as nothing else can reach its memory. The demo uses the "
            + "names latchkey-demo/flash-sale/*; run one demo per backend at a time.")
final class DemoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Option(
      names = {"-k", "--stock"},
      paramLabel = "K",
      defaultValue = "200",
      description = "Items in stock (default: ${DEFAULT-VALUE}).")
  int stock;

  @Option(
      names = {"-p", "--processes"},
      paramLabel = "P",
      defaultValue = "4",
      description = "Worker processes (default: ${DEFAULT-VALUE}).")
  int processes;

  @Option(
      names = {"-t", "--threads"},
      paramLabel = "T",
      defaultValue = "4",
      description = "Buyer threads per process (default: ${DEFAULT-VALUE}).")
  int threads;

  @Override
  public Integer call() throws InterruptedException {
    check("--stock", stock, 1_000_000);
    check("--processes", processes, 32);
    check("--threads", threads, 256);
    Optional<String> given = backend.given();
    Optional<DemoServer> embedded =
        given.isEmpty() ? Optional.of(DemoServer.REDIS) : given.flatMap(DemoServer::named);
    if (embedded.isPresent()) {
      try (DemoServer.Running server = embedded.get().start()) {
        return run(server.uri(), server.note());
      }
    }
    return run(given.get(), null);
  }

  private void check(String option, int value, int max) {
    if (value < 1 || value > max) {
      throw new ParameterException(
          spec.commandLine(), option + " must be between 1 and " + max + ", was " + value);
    }
  }

  private int run(String uri, @Nullable String note) throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    boolean inProcess = BackendOption.isInProcess(uri);
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      String buyers =
          inProcess
              ? processes * threads + " buyer threads in this process"
              : processes + " processes x " + threads + " buyer threads";
      out.printf(Locale.ROOT, "Flash sale: %d items, %s%n", stock, buyers);
      out.printf(
          Locale.ROOT,
          "Backend: %s%s%n%n",
          latchkey.backendDescription(),
          inProcess
              ? " (in-process: no other process can reach it)"
              : note == null ? "" : " (" + note + ")");
      out.flush();
      List<FlashSale.Result> results;
      if (inProcess) {
        results = sell(latchkey, new FlashSale.Threads(latchkey, processes * threads));
      } else {
        try (WorkerProcesses workers = startWorkers(uri)) {
          results = sell(latchkey, workers);
        }
      }
      deleteRecords(latchkey);
      print(out, results);
    }
    return ExitCodes.OK;
  }

  /**
   * Deletes the semaphore of the checkout run, so that the demo leaves no record behind (the locks
   * leave none once released). Where records cannot be deleted, the next demo sets the permits
   * again, so the one record left is reused.
   */
  private static void deleteRecords(Latchkey latchkey) {
    if (latchkey.features().contains(Feature.DELETE_RECORDS)) {
      latchkey.semaphore(SaleGuard.SEMAPHORE.resource()).delete();
    }
  }

  private WorkerProcesses startWorkers(String uri) throws InterruptedException {
    try (ProgressBar bar = ProgressBar.forTerminal("starting workers", processes)) {
      bar.update(0);
      return WorkerProcesses.start(uri, processes, threads, bar::update);
    }
  }

  private List<FlashSale.Result> sell(Latchkey latchkey, FlashSale.Buyers buyers)
      throws InterruptedException {
    FlashSale sale = new FlashSale(latchkey, stock, buyers);
    List<FlashSale.Result> results = new ArrayList<>();
    for (SaleGuard guard : SaleGuard.values()) {
      try (ProgressBar bar = ProgressBar.forTerminal(guard.label(), stock)) {
        results.add(sale.run(guard, bar::update));
      }
    }
    return results;
  }

  private static void print(PrintWriter out, List<FlashSale.Result> results) {
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
  }
}
