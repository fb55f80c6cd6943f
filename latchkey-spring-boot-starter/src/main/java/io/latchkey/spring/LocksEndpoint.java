package io.latchkey.spring;

import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LockInfo;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code locks} actuator endpoint: {@code GET /actuator/locks} lists the locks held on the
 * backend (by every client, not only this application), {@code GET /actuator/locks/{name}} shows
 * one, and {@code POST} or {@code DELETE /actuator/locks/{name}} force-releases it (its holders'
 * leases turn lost). Names may contain slashes.
 *
 * <p>Its default access is read-only: force-release is refused until {@code
 * management.endpoint.locks.access=unrestricted}; and like every write endpoint it should sit
 * behind the application's security. Needs a backend with {@link Feature#ADMIN}.
 */
@Endpoint(id = "locks", defaultAccess = Access.READ_ONLY)
public class LocksEndpoint {
  private final Latchkey latchkey;

  /**
   * @param latchkey the client whose backend is shown
   */
  public LocksEndpoint(Latchkey latchkey) {
    this.latchkey = latchkey;
  }

  /** One holder of a lock, as the endpoint shows it. */
  public record Holder(
      String owner,
      String clientId,
      String mode,
      int holds,
      long remainingLeaseMillis,
      long fencingToken) {}

  /** One lock, as the endpoint shows it. */
  public record Lock(String name, List<Holder> holders, int queuedWaiters) {}

  /** The answer to a force-release. */
  public record ForceRelease(String name, boolean released) {}

  /** Everything on one page. */
  public record Locks(String backend, List<Lock> locks) {}

  /**
   * @return the held locks
   */
  @ReadOperation
  public Locks locks() {
    return new Locks(
        latchkey.backendDescription(),
        latchkey.admin().list().stream().map(LocksEndpoint::view).toList());
  }

  /**
   * @param name the lock's name, in path segments
   * @return the lock, or null (404) if nobody holds it
   */
  @ReadOperation
  public @Nullable Lock lock(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
    return latchkey.admin().inspect(String.join("/", name)).map(LocksEndpoint::view).orElse(null);
  }

  /**
   * @param name the lock's name, in path segments
   * @return whether it was held
   */
  @WriteOperation
  public ForceRelease forceRelease(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
    String joined = String.join("/", name);
    return new ForceRelease(joined, latchkey.admin().forceRelease(joined));
  }

  /**
   * @param name the lock's name, in path segments
   * @return whether it was held
   */
  @DeleteOperation
  public ForceRelease delete(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
    return forceRelease(name);
  }

  private static Lock view(LockInfo info) {
    return new Lock(
        info.name(),
        info.holders().stream().map(LocksEndpoint::view).toList(),
        info.queuedWaiters());
  }

  private static Holder view(HolderInfo holder) {
    return new Holder(
        holder.owner(),
        holder.clientId(),
        holder.mode().name(),
        holder.holds(),
        holder.remainingLease().toMillis(),
        holder.fencingToken());
  }
}
