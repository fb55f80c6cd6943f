package io.latchkey.spring;

import io.latchkey.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the innermost {@link Locked @Locked} method running on the current thread, for code
 * that needs its fencing token without a {@link Lease} parameter. Only on the thread that called
 * the method: an asynchronous method's continuation on another thread must take the {@code Lease}
 * as a parameter instead.
 */
public final class CurrentLease {
  private static final ThreadLocal<Deque<Lease>> LEASES = ThreadLocal.withInitial(ArrayDeque::new);

  private CurrentLease() {}

  /**
   * @return the lease of the innermost {@code @Locked} method running on this thread
   * @throws IllegalStateException if none runs on this thread
   */
  public static Lease get() {
    return find()
        .orElseThrow(
            () -> new IllegalStateException("no @Locked method is running on this thread"));
  }

  /**
   * @return the lease of the innermost {@code @Locked} method running on this thread, if any
   */
  public static Optional<Lease> find() {
    return Optional.ofNullable(LEASES.get().peek());
  }

  static void push(Lease lease) {
    LEASES.get().push(lease);
  }

  static void pop() {
    Deque<Lease> leases = LEASES.get();
    leases.pop();
    if (leases.isEmpty()) {
      LEASES.remove();
    }
  }
}
