package io.latchkey.cli;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.Latchkey;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What the monitor commands show of semaphores, leased semaphores (each granted permit with its
 * client and lease) and latches, beside the locks of a {@link LockView}, whose live clients it
 * borrows. A backend without {@link Feature#SYNCHRONIZER_INSPECTION} cannot show them: the view is
 * then {@linkplain #inspected() not inspected}, and says so instead of claiming that none exist (in
 * JSON, its lists and objects are {@code null}, not empty).
 *
 * <p>Permit ids are credentials (whoever has one may release the permit), so only their first
 * characters are shown, as with owner tokens.
 */
final class SynchronizerView {
  private final boolean inspected;
  private final List<SemaphoreInfo> semaphores;
  private final List<LeasedSemaphoreInfo> leasedSemaphores;
  private final List<LatchInfo> latches;

  private SynchronizerView(
      boolean inspected,
      List<SemaphoreInfo> semaphores,
      List<LeasedSemaphoreInfo> leasedSemaphores,
      List<LatchInfo> latches) {
    this.inspected = inspected;
    this.semaphores = semaphores;
    this.leasedSemaphores = leasedSemaphores;
    this.latches = latches;
  }

  /** Every semaphore, leased semaphore and latch, if the backend can list them. */
  static SynchronizerView all(Latchkey latchkey) {
    if (!canInspect(latchkey)) {
      return new SynchronizerView(false, List.of(), List.of(), List.of());
    }
    return new SynchronizerView(
        true,
        latchkey.admin().listSemaphores(),
        latchkey.admin().listLeasedSemaphores(),
        latchkey.admin().listLatches());
  }

  /** The semaphore, leased semaphore and latch of one name (those that exist). */
  static SynchronizerView named(Latchkey latchkey, String name) {
    if (!canInspect(latchkey)) {
      return new SynchronizerView(false, List.of(), List.of(), List.of());
    }
    return new SynchronizerView(
        true,
        latchkey.admin().inspectSemaphore(name).map(List::of).orElse(List.of()),
        latchkey.admin().inspectLeasedSemaphore(name).map(List::of).orElse(List.of()),
        latchkey.admin().inspectLatch(name).map(List::of).orElse(List.of()));
  }

  private static boolean canInspect(Latchkey latchkey) {
    return latchkey.features().contains(Feature.SYNCHRONIZER_INSPECTION);
  }

  /**
   * @return false if the backend cannot show semaphores and latches
   */
  boolean inspected() {
    return inspected;
  }

  /**
   * @return true if nothing was found (or nothing could be looked at)
   */
  boolean isEmpty() {
    return semaphores.isEmpty() && leasedSemaphores.isEmpty() && latches.isEmpty();
  }

  /** The sentence that stands in for the view on a backend that cannot inspect synchronizers. */
  static String cannotInspect(Latchkey latchkey) {
    return "Semaphores, leased semaphores and latches are not shown: backend "
        + latchkey.backendDescription()
        + " cannot inspect them.";
  }

  /** The tables of {@code ls}, one per kind that has records, each after an empty line. */
  void printTables(PrintWriter out, LockView clients) {
    if (!semaphores.isEmpty()) {
      Table table = new Table("semaphore", "available");
      for (SemaphoreInfo semaphore : semaphores) {
        table.row(semaphore.name(), Integer.toString(semaphore.availablePermits()));
      }
      out.println();
      table.print(out);
    }
    if (!leasedSemaphores.isEmpty()) {
      Table table =
          new Table(
              "leased semaphore",
              "total",
              "available",
              "permit",
              "lease left",
              "fencing",
              "client",
              "host",
              "pid",
              "alive");
      for (LeasedSemaphoreInfo semaphore : leasedSemaphores) {
        String total = Integer.toString(semaphore.totalPermits());
        String available = Integer.toString(semaphore.availablePermits());
        if (semaphore.permits().isEmpty()) {
          table.row(semaphore.name(), total, available, "-", "-", "-", "-", "-", "-", "-");
        }
        for (PermitInfo permit : semaphore.permits()) {
          Optional<ClientInfo> client = clients.client(permit.clientId());
          table.row(
              semaphore.name(),
              total,
              available,
              LockView.masked(permit.permitId()),
              Durations.format(permit.remainingLease()),
              Long.toString(permit.fencingToken()),
              LockView.shortId(permit.clientId()),
              client.map(ClientInfo::host).orElse("-"),
              client.map(c -> Long.toString(c.pid())).orElse("-"),
              LockView.aliveLabel(clients.alive(permit.clientId())));
        }
      }
      out.println();
      table.print(out);
    }
    if (!latches.isEmpty()) {
      Table table = new Table("latch", "count");
      for (LatchInfo latch : latches) {
        table.row(latch.name(), Long.toString(latch.count()));
      }
      out.println();
      table.print(out);
    }
  }

  /**
   * The detail of {@code inspect}: one block per record, separated by empty lines.
   *
   * @param afterOther whether something was printed before, so that the first block needs an empty
   *     line too
   */
  void printDetail(PrintWriter out, LockView clients, boolean afterOther) {
    boolean separate = afterOther;
    for (SemaphoreInfo semaphore : semaphores) {
      Table table = new Table("semaphore", semaphore.name());
      table.row("available", Integer.toString(semaphore.availablePermits()));
      if (separate) {
        out.println();
      }
      separate = true;
      table.print(out);
    }
    for (LeasedSemaphoreInfo semaphore : leasedSemaphores) {
      Table table = new Table("leased semaphore", semaphore.name());
      table.row("total", Integer.toString(semaphore.totalPermits()));
      table.row("available", Integer.toString(semaphore.availablePermits()));
      int index = 0;
      for (PermitInfo permit : semaphore.permits()) {
        index++;
        Optional<ClientInfo> client = clients.client(permit.clientId());
        table.row("permit", index + " of " + semaphore.permits().size());
        table.row("  id", LockView.masked(permit.permitId()));
        table.row("  lease left", Durations.format(permit.remainingLease()));
        table.row("  fencing token", Long.toString(permit.fencingToken()));
        table.row("  client", permit.clientId());
        table.row("  alive", LockView.aliveLabel(clients.alive(permit.clientId())));
        if (client.isPresent()) {
          table.row("  host", client.get().host());
          table.row("  pid", Long.toString(client.get().pid()));
        }
      }
      if (separate) {
        out.println();
      }
      separate = true;
      table.print(out);
    }
    for (LatchInfo latch : latches) {
      Table table = new Table("latch", latch.name());
      table.row("count", Long.toString(latch.count()));
      if (separate) {
        out.println();
      }
      separate = true;
      table.print(out);
    }
  }

  /**
   * Adds {@code semaphores}, {@code leasedSemaphores} and {@code latches} to {@code ls}'s document:
   * arrays, or {@code null} where the backend cannot inspect them.
   */
  void putLists(Map<String, @Nullable Object> document, LockView clients) {
    document.put("semaphores", inspected ? jsonList(semaphores, SynchronizerView::json) : null);
    document.put(
        "leasedSemaphores",
        inspected ? jsonList(leasedSemaphores, semaphore -> json(semaphore, clients)) : null);
    document.put("latches", inspected ? jsonList(latches, SynchronizerView::json) : null);
  }

  /**
   * Adds {@code semaphore}, {@code leasedSemaphore} and {@code latch} to {@code inspect}'s
   * document: objects, or {@code null} where none exists or the backend cannot inspect them ({@code
   * synchronizersInspected} tells which).
   */
  void putOne(Map<String, @Nullable Object> document, LockView clients) {
    document.put("semaphore", first(jsonList(semaphores, SynchronizerView::json)));
    document.put(
        "leasedSemaphore",
        first(jsonList(leasedSemaphores, semaphore -> json(semaphore, clients))));
    document.put("latch", first(jsonList(latches, SynchronizerView::json)));
    document.put("synchronizersInspected", inspected);
  }

  private static @Nullable Object first(List<Object> list) {
    return list.isEmpty() ? null : list.get(0);
  }

  private static <T> List<Object> jsonList(List<T> records, Function<T, Object> json) {
    List<Object> list = new ArrayList<>();
    for (T record : records) {
      list.add(json.apply(record));
    }
    return list;
  }

  private static Object json(SemaphoreInfo semaphore) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", semaphore.name());
    json.put("availablePermits", semaphore.availablePermits());
    return json;
  }

  private static Object json(LeasedSemaphoreInfo semaphore, LockView clients) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", semaphore.name());
    json.put("totalPermits", semaphore.totalPermits());
    json.put("availablePermits", semaphore.availablePermits());
    List<Object> permits = new ArrayList<>();
    for (PermitInfo permit : semaphore.permits()) {
      Optional<ClientInfo> client = clients.client(permit.clientId());
      Map<String, @Nullable Object> one = new LinkedHashMap<>();
      one.put("permitId", LockView.masked(permit.permitId()));
      one.put("clientId", permit.clientId());
      one.put("clientAlive", clients.alive(permit.clientId()));
      one.put("host", client.map(ClientInfo::host).orElse(null));
      one.put("pid", client.map(ClientInfo::pid).orElse(null));
      one.put("leaseRemainingMillis", permit.remainingLease().toMillis());
      one.put("fencingToken", permit.fencingToken());
      permits.add(one);
    }
    json.put("permits", permits);
    return json;
  }

  private static Object json(LatchInfo latch) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", latch.name());
    json.put("count", latch.count());
    return json;
  }
}
