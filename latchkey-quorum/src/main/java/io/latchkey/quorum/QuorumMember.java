package io.latchkey.quorum;

import io.latchkey.BackendUnavailableException;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.LatchkeyBackend;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One member of a quorum: its backend (absent if it could not be opened, in which case every call
 * fails at once) and what this client last learnt of its epoch record.
 */
final class QuorumMember {
  /** An epoch not read yet. */
  static final long UNKNOWN = -1;

  private final int index;
  private final String description;
  private final @Nullable LatchkeyBackend backend;
  private final @Nullable RuntimeException openFailure;
  private volatile long epoch = UNKNOWN;
  private volatile long quarantineEndsNanos;
  private volatile boolean answering = true;

  private QuorumMember(
      int index,
      String description,
      @Nullable LatchkeyBackend backend,
      @Nullable RuntimeException openFailure) {
    this.index = index;
    this.description = description;
    this.backend = backend;
    this.openFailure = openFailure;
  }

  static QuorumMember opened(int index, LatchkeyBackend backend) {
    return new QuorumMember(index, backend.description(), backend, null);
  }

  static QuorumMember unreachable(int index, RuntimeException openFailure) {
    return new QuorumMember(index, "member " + (index + 1) + " (not opened)", null, openFailure);
  }

  int index() {
    return index;
  }

  String description() {
    return description;
  }

  @Nullable LatchkeyBackend backend() {
    return backend;
  }

  /**
   * Calls the member's backend; a member that could not be opened, or a call that throws, gives a
   * failed stage.
   */
  <T> CompletionStage<T> call(Function<LatchkeyBackend, ? extends CompletionStage<T>> operation) {
    if (backend == null) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException(
              description + " could not be opened: " + failureMessage(), openFailure));
    }
    try {
      return operation.apply(backend);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Calls the member's fence store (every opened member has one: {@link QuorumBackend#open}). */
  <T> CompletionStage<T> fences(Function<FenceStore, ? extends CompletionStage<T>> operation) {
    return call(member -> operation.apply(member.fences().orElseThrow()));
  }

  private String failureMessage() {
    return openFailure == null ? "unknown" : String.valueOf(openFailure.getMessage());
  }

  /** Records what an epoch call answered. */
  void observe(FenceStore.Epoch answer) {
    epoch = answer.value();
    if (answer.isQuarantined()) {
      quarantineEndsNanos =
          System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(answer.quarantineMillis());
    }
  }

  /**
   * @return the epoch last read: 0 if the member was empty, {@link #UNKNOWN} if never read
   */
  long epoch() {
    return epoch;
  }

  /**
   * @return true if the member was last seen empty or in quarantine: its grants and confirmations
   *     do not count towards a majority
   */
  boolean quarantined() {
    return epoch == 0 || System.nanoTime() - quarantineEndsNanos < 0;
  }

  /** Records that the member answered a call within its round's bound. */
  void answered() {
    answering = true;
  }

  /** Records that the member left a call unanswered at its round's bound. */
  void leftUnanswered() {
    answering = false;
  }

  /**
   * @return false if the member left a call unanswered at its round's bound and has answered none
   *     within a round's bound since (a member that is frozen, cut off or far slower than the
   *     others): a shared attempt does not wait for it ({@link QuorumAcquisition})
   */
  boolean answering() {
    return answering;
  }

  @Override
  public String toString() {
    return description;
  }
}
