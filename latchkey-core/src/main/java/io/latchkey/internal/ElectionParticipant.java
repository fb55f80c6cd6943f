package io.latchkey.internal;

import io.latchkey.Feature;
import io.latchkey.LeaderElection;
import io.latchkey.LeaderTerm;
import io.latchkey.LeadershipListener;
import io.latchkey.Lease;
import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.OwnerToken;
import io.latchkey.Primitive;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One participant of a leader election, built on the election's lock and nothing else: any backend
 * that has locks has elections.
 *
 * <p>How it works. The participant owns a random owner token and waits, without a deadline, for the
 * election's lock under that owner, with the watchdog's lease. The grant starts a term; the lease's
 * loss, a revocation request or closing ends it. After a term ends (other than by closing) the
 * participant waits for the lock again. A wait that fails (the backend is down) is started again
 * after the re-check interval, by a task on the client's scheduler that only starts the
 * asynchronous wait. Listeners run through a {@link SerialExecutor} on the callback executor, so
 * that a term's {@code ended} never overtakes its {@code elected}.
 *
 * <p>Hand-over. Closing (or stepping down) releases the lock, whose release wakes the head of its
 * wait queue: the next participant is elected at once, not after a lease. A participant that dies
 * is replaced once its lease runs out.
 */
// Every stage started here handles its own outcome (a failed wait retries, a failed release is
// logged and runs out with its lease), so none is read.
@SuppressWarnings("FutureReturnValueIgnored")
final class ElectionParticipant implements LeaderElection {
  private static final Logger LOG = LoggerFactory.getLogger(ElectionParticipant.class);

  private final LatchkeyClient client;
  private final String name;
  private final OwnerToken token = OwnerToken.random();
  private final String owner = token.value();
  private final LeadershipListener listener;
  private final SerialExecutor callbacks;

  // Guarded by this.
  private @Nullable Term current;
  private @Nullable CompletableFuture<Lease> competing;
  private CompletableFuture<Void> elected = new CompletableFuture<>();
  private boolean closed;

  ElectionParticipant(LatchkeyClient client, String name, LeadershipListener listener) {
    this.client = client;
    this.name = name;
    this.listener = listener;
    this.callbacks = new SerialExecutor(client.options().callbackExecutor());
  }

  /** Starts competing. */
  void join() {
    compete();
  }

  private void compete() {
    CompletableFuture<Lease> attempt;
    synchronized (this) {
      if (closed) {
        return;
      }
      attempt =
          client.acquiredAsync(
              client.acquireLock(
                  Primitive.LEADER_ELECTION,
                  new HolderRef(ResourceType.LOCK, name, owner),
                  LockMode.EXCLUSIVE,
                  false,
                  -1,
                  null),
              () -> "lead election '" + name + "'",
              Duration.ZERO,
              Lease::releaseAsync);
      competing = attempt;
    }
    attempt.whenComplete(this::competed);
  }

  private void competed(@Nullable Lease lease, @Nullable Throwable failure) {
    if (lease == null) {
      Throwable cause = failure == null ? null : BackendCalls.unwrap(failure);
      if (cause instanceof CancellationException || isClosed()) {
        return;
      }
      LOG.warn(
          "participant {} of election '{}' could not wait for leadership, trying again: {}",
          token,
          name,
          String.valueOf(cause));
      retryLater();
      return;
    }
    Term term = new Term(lease);
    synchronized (this) {
      if (closed) {
        term.ended = true;
        releaseQuietly(lease);
        return;
      }
      current = term;
      elected.complete(null);
    }
    LOG.info("participant {} leads election '{}' ({})", token, name, term);
    callbacks.execute(() -> listener.elected(term));
    lease.addListener(
        new LeaseListener() {
          @Override
          public void lost(LeaseLostException reason) {
            if (end(term, reason)) {
              releaseQuietly(lease).whenComplete((ignored, failed) -> compete());
            }
          }
        });
    if (client.features().contains(Feature.REVOCATION)) {
      try {
        lease.onRevocationRequested(revoked -> stepDown(term));
      } catch (RuntimeException e) {
        LOG.warn("election '{}' will not hear revocation requests: {}", name, e.toString());
      }
    }
  }

  /** A revocation request: give the lock to the next participant, then compete again. */
  private void stepDown(Term term) {
    if (end(term, null)) {
      LOG.info("participant {} steps down in election '{}'", token, name);
      releaseQuietly(term.lease).whenComplete((ignored, failed) -> compete());
    }
  }

  /** Ends a term once; returns false if it had ended already. */
  private boolean end(Term term, @Nullable LeaseLostException lost) {
    synchronized (this) {
      if (current != term) {
        return false;
      }
      current = null;
      term.ended = true;
      elected = new CompletableFuture<>();
    }
    callbacks.execute(() -> listener.ended(term, lost));
    return true;
  }

  private void retryLater() {
    try {
      client
          .scheduler()
          .schedule(
              this::compete, client.options().recheckInterval().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closing) {
      // The client is closing: the election ends with it.
    }
  }

  private static CompletableFuture<Void> releaseQuietly(Lease lease) {
    return lease
        .releaseAsync()
        .toCompletableFuture()
        .exceptionally(
            failure -> {
              LOG.debug("releasing an ended term: {}", failure.toString());
              return null;
            });
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String participantId() {
    return owner;
  }

  @Override
  public boolean isLeader() {
    Term term = currentOrNull();
    return term != null && term.isValid();
  }

  @Override
  public Optional<LeaderTerm> currentTerm() {
    return Optional.ofNullable(currentOrNull());
  }

  private synchronized @Nullable Term currentOrNull() {
    return current;
  }

  @Override
  public Optional<LeaderTerm> awaitLeadership(Duration wait) throws InterruptedException {
    Arguments.wait(wait);
    long deadline = client.options().ticker().nanoTime() + wait.toNanos();
    while (true) {
      CompletableFuture<Void> next;
      synchronized (this) {
        if (current != null) {
          return Optional.of(current);
        }
        if (closed) {
          return Optional.empty();
        }
        next = elected;
      }
      long left = deadline - client.options().ticker().nanoTime();
      if (left <= 0) {
        return Optional.empty();
      }
      try {
        next.get(left, TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        return Optional.empty();
      } catch (CancellationException | ExecutionException closedMeanwhile) {
        // Closed: the loop says so.
      }
    }
  }

  @Override
  public void close() {
    Term term;
    CompletableFuture<Lease> attempt;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      client.left(this);
      term = current;
      current = null;
      attempt = competing;
      elected.cancel(false);
    }
    if (attempt != null) {
      attempt.cancel(false); // a grant that races with this is given back
    }
    if (term != null) {
      term.ended = true;
      Blocking.join(releaseQuietly(term.lease));
      callbacks.execute(() -> listener.ended(term, null));
    }
  }

  @Override
  public String toString() {
    return "LeaderElection['"
        + name
        + "', participant "
        + token
        + ", "
        + (isLeader() ? "leader" : "not leader")
        + "]";
  }

  /** One term: the lease of the election's lock, until it ends. */
  private final class Term implements LeaderTerm {
    final Lease lease;
    volatile boolean ended;

    Term(Lease lease) {
      this.lease = lease;
    }

    @Override
    public String electionName() {
      return name;
    }

    @Override
    public String participantId() {
      return owner;
    }

    @Override
    public long fencingToken() {
      return lease.fencingToken();
    }

    @Override
    public boolean isValid() {
      return !ended && lease.isValid();
    }

    @Override
    public String toString() {
      return "LeaderTerm['" + name + "', token " + fencingToken() + ", valid " + isValid() + "]";
    }
  }
}
