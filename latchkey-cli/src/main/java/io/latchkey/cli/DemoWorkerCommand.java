package io.latchkey.cli;

import io.latchkey.Latchkey;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code latchkey demo-worker} (hidden): one worker process of the demo, started by {@link
 * WorkerProcesses} with the same jar. It connects once, then runs sales on the parent's orders.
 *
 * <p>The line protocol. On standard input: {@code RUN <guard> <stockFile>} starts a run: {@code
 * --threads} buyer threads buy from the stock file until it is sold out; the end of input (or
 * {@code QUIT}) ends the worker. On standard output: {@code READY} once connected; {@code SALE
 * <waitNanos>} for each item sold; {@code DONE} when a run's buyers have finished; {@code ERROR
 * <message>} before exiting with a failure. Everything else (logs) goes to standard error.
 */
@Command(name = "demo-worker", hidden = true)
final class DemoWorkerCommand implements Callable<Integer> {
  @Option(names = "--backend", required = true)
  String backend;

  @Option(names = "--threads", required = true)
  int threads;

  private final PrintStream out =
      new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

  @Override
  public Integer call() throws Exception {
    try (Latchkey latchkey = BackendOption.connect(backend);
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      say("READY");
      for (String line = in.readLine();
          line != null && !line.equals("QUIT");
          line = in.readLine()) {
        String[] order = line.split(" ", 3);
        if (order.length != 3 || !order[0].equals("RUN")) {
          throw new IllegalArgumentException("not an order: " + line);
        }
        run(latchkey, SaleGuard.valueOf(order[1]), Stock.mapped(Path.of(order[2])));
        say("DONE");
      }
      return ExitCodes.OK;
    } catch (Exception e) {
      say("ERROR " + OneLineErrors.describe(e));
      return ExitCodes.FAILURE;
    }
  }

  private void run(Latchkey latchkey, SaleGuard guard, Stock stock) throws Exception {
    AtomicReference<@Nullable Exception> failure = new AtomicReference<>();
    AtomicLong sold = new AtomicLong();
    List<Thread> buyers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread buyer =
          new Thread(
              () -> {
                try {
                  Buyer.buyUntilSoldOut(
                      guard,
                      latchkey,
                      stock,
                      wait -> {
                        sold.incrementAndGet();
                        say("SALE " + wait);
                      });
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "buyer-" + i);
      buyer.start();
      buyers.add(buyer);
    }
    for (Thread buyer : buyers) {
      // Each purchase is bounded by the buyer's lock wait, and the stock is finite.
      buyer.join();
    }
    Exception failed = failure.get();
    if (failed != null) {
      throw failed;
    }
  }

  private void say(String line) {
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }
}
