package io.latchkey.cli;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LockInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What the monitor commands show of held locks: each holder with its owner split into client and
 * thread, and the client's presence record (host, pid) if the client is alive. One snapshot: the
 * locks and the live clients are read once, one after the other.
 *
 * <p>Owner ids are {@code <clientId>:<threadId>} for thread owners; explicit owner tokens are
 * credentials (whoever has one may release the lock), so only their first characters are shown.
 */
final class LockView {
  private static final int SHORT_ID = 8;

  private final List<LockInfo> locks;
  private final @Nullable Map<String, ClientInfo> liveClients;

  private LockView(List<LockInfo> locks, @Nullable Map<String, ClientInfo> liveClients) {
    this.locks = locks;
    this.liveClients = liveClients;
  }

  /**
   * Every held lock; the backend must list locks ({@link Feature#ADMIN}); liveness is unknown on a
   * backend that cannot list clients ({@link Feature#PRESENCE}).
   */
  static LockView all(Latchkey latchkey) {
    List<LockInfo> locks = latchkey.admin().list();
    return new LockView(locks, liveClients(latchkey));
  }

  /** One lock, held or not; liveness is unknown on a backend that cannot list clients. */
  static LockView of(Latchkey latchkey, String name) {
    List<LockInfo> locks = latchkey.admin().inspect(name).map(List::of).orElse(List.of());
    return new LockView(locks, liveClients(latchkey));
  }

  private static @Nullable Map<String, ClientInfo> liveClients(Latchkey latchkey) {
    if (!latchkey.features().contains(Feature.PRESENCE)) {
      return null;
    }
    Map<String, ClientInfo> byId = new HashMap<>();
    for (ClientInfo client : latchkey.admin().clients()) {
      byId.put(client.clientId(), client);
    }
    return byId;
  }

  List<LockInfo> locks() {
    return locks;
  }

  /**
   * @return the holder's client, if its presence record says it is alive
   */
  Optional<ClientInfo> client(HolderInfo holder) {
    return client(holder.clientId());
  }

  /**
   * @return the client, if its presence record says it is alive
   */
  Optional<ClientInfo> client(String clientId) {
    return liveClients == null ? Optional.empty() : Optional.ofNullable(liveClients.get(clientId));
  }

  /**
   * @return true or false, or null if this backend cannot tell
   */
  @Nullable Boolean alive(HolderInfo holder) {
    return alive(holder.clientId());
  }

  /**
   * @return whether the client is alive: true or false, or null if this backend cannot tell
   */
  @Nullable Boolean alive(String clientId) {
    return liveClients == null ? null : liveClients.containsKey(clientId);
  }

  static String aliveLabel(@Nullable Boolean alive) {
    return alive == null ? "?" : alive ? "yes" : "no";
  }

  /**
   * @return the thread part of a thread owner's id, if the owner is a thread
   */
  static Optional<String> thread(HolderInfo holder) {
    String prefix = holder.clientId() + ":";
    return holder.owner().startsWith(prefix) && holder.owner().length() > prefix.length()
        ? Optional.of(holder.owner().substring(prefix.length()))
        : Optional.empty();
  }

  /**
   * @return the owner as it may be shown: the full id of a thread owner, a token's first characters
   */
  static String owner(HolderInfo holder) {
    if (thread(holder).isPresent()) {
      return holder.owner();
    }
    return masked(holder.owner());
  }

  /**
   * @return the first characters of a credential (an owner token, a permit id: whoever has it may
   *     release what it holds)
   */
  static String masked(String credential) {
    return credential.length() > 12 ? credential.substring(0, 12) + "..." : credential;
  }

  /**
   * @return {@code thread 1}, or {@code token tok-1a2b3c4d...}
   */
  static String ownerLabel(HolderInfo holder) {
    return thread(holder).map(t -> "thread " + t).orElseGet(() -> "token " + owner(holder));
  }

  /**
   * @return who a holder is, for a sentence: {@code thread 1 of client 5e0c6f1a (host box, pid 42)}
   */
  String describe(HolderInfo holder) {
    return ownerLabel(holder)
        + " of client "
        + shortId(holder.clientId())
        + client(holder).map(c -> " (host " + c.host() + ", pid " + c.pid() + ")").orElse("");
  }

  /**
   * @return every holder of the viewed locks, described as {@link #describe} does
   */
  List<String> describeHolders() {
    List<String> holders = new ArrayList<>();
    for (LockInfo lock : locks) {
      for (HolderInfo holder : lock.holders()) {
        holders.add(describe(holder));
      }
    }
    return holders;
  }

  static String shortId(String clientId) {
    return clientId.length() > SHORT_ID ? clientId.substring(0, SHORT_ID) : clientId;
  }

  static String mode(HolderInfo holder) {
    return holder.mode().name().toLowerCase(Locale.ROOT);
  }

  /** The human table of {@code ls}: one row per holder. */
  Table table() {
    Table table =
        new Table(
            "lock",
            "mode",
            "holds",
            "lease left",
            "fencing",
            "waiters",
            "client",
            "host",
            "pid",
            "owner",
            "alive");
    for (LockInfo lock : locks) {
      for (HolderInfo holder : lock.holders()) {
        Optional<ClientInfo> client = client(holder);
        table.row(
            lock.name(),
            mode(holder),
            Integer.toString(holder.holds()),
            Durations.format(holder.remainingLease()),
            Long.toString(holder.fencingToken()),
            Integer.toString(lock.queuedWaiters()),
            shortId(holder.clientId()),
            client.map(ClientInfo::host).orElse("-"),
            client.map(c -> Long.toString(c.pid())).orElse("-"),
            ownerLabel(holder),
            aliveLabel(alive(holder)));
      }
    }
    return table;
  }

  /** A lock as a JSON object. */
  Map<String, Object> json(LockInfo lock) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", lock.name());
    json.put("held", !lock.holders().isEmpty());
    json.put("waiters", lock.queuedWaiters());
    List<Object> holders = new ArrayList<>();
    for (HolderInfo holder : lock.holders()) {
      holders.add(json(holder));
    }
    json.put("holders", holders);
    return json;
  }

  private Map<String, @Nullable Object> json(HolderInfo holder) {
    Optional<ClientInfo> client = client(holder);
    Map<String, @Nullable Object> json = new LinkedHashMap<>();
    json.put("owner", owner(holder));
    json.put("thread", thread(holder).orElse(null));
    json.put("clientId", holder.clientId());
    json.put("clientAlive", alive(holder));
    json.put("host", client.map(ClientInfo::host).orElse(null));
    json.put("pid", client.map(ClientInfo::pid).orElse(null));
    json.put("clientStartedAt", client.map(c -> c.startedAt().toString()).orElse(null));
    json.put("mode", mode(holder));
    json.put("holds", holder.holds());
    json.put("leaseRemainingMillis", holder.remainingLease().toMillis());
    json.put("fencingToken", holder.fencingToken());
    return json;
  }
}
