package io.latchkey.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisReadOnlyException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The one connection that carries the backend's commands, replaced by a new one when it drops.
 *
 * <p>Commands are sent at most once. Lettuce's own reconnection re-sends the commands that were in
 * flight when a connection dropped, and a lock script run twice is wrong (a release run twice frees
 * a re-entered lock its owner still holds). So the client is built without auto-reconnect: a
 * command in flight on a dropped connection fails, the engine treats its outcome as unknown, and
 * the next command opens a new connection (one attempt at a time, shared by every command that
 * waits for it; they go out on it in the order they were given, so that an engine's compensating
 * release cannot overtake the acquire that follows it). A command that times out retires its
 * connection, which may be half-open; so does a READONLY reply, which means that a fail-over
 * demoted the node (a new connection asks the sentinels for the new master).
 */
final class RedisCommandConnection implements AutoCloseable {
  private static final int SCAN_COUNT = 1000;

  private final RedisClient client;
  private final RedisURI uri;
  private volatile StatefulRedisConnection<String, String> current;
  // Guarded by this: the commands waiting for the connection being opened (in the order given),
  // and the flags.
  private final List<WaitingCommand> waiting = new ArrayList<>();
  private boolean connecting;
  private boolean currentClosed;
  private boolean closed;

  /**
   * Connects at once.
   *
   * @param client a client built without auto-reconnect
   * @param uri where to connect
   * @throws io.lettuce.core.RedisConnectionException if the server cannot be reached
   */
  RedisCommandConnection(RedisClient client, RedisURI uri) {
    this.client = client;
    this.uri = uri;
    this.current = client.connect(StringCodec.UTF8, uri);
  }

  /**
   * Sends a command, over a new connection if the current one has dropped. Commands that wait for a
   * new connection go out on it in the order in which they were given.
   *
   * @param command sends the command on the given commands and returns its reply
   * @return the reply
   */
  <T> CompletableFuture<T> execute(
      Function<RedisAsyncCommands<String, String>, ? extends CompletionStage<T>> command) {
    StatefulRedisConnection<String, String> open = current;
    if (open.isOpen()) {
      return send(open, command);
    }
    CompletableFuture<T> reply = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        reply.completeExceptionally(new IllegalStateException("the Redis backend is closed"));
      } else if (current.isOpen()) {
        return send(current, command);
      } else {
        waiting.add(
            new WaitingCommand(
                connection -> relay(send(connection, command), reply),
                reply::completeExceptionally));
        if (!connecting) {
          connecting = true;
          closeCurrent();
          client.connectAsync(StringCodec.UTF8, uri).whenComplete(this::connected);
        }
      }
    }
    return reply;
  }

  private void connected(
      @Nullable StatefulRedisConnection<String, String> connection, @Nullable Throwable failure) {
    List<WaitingCommand> waited;
    synchronized (this) {
      connecting = false;
      waited = List.copyOf(waiting);
      waiting.clear();
      if (connection != null && !closed) {
        // Sent before the connection becomes current, so that no later command overtakes them.
        waited.forEach(command -> command.send().accept(connection));
        current = connection;
        currentClosed = false;
        return;
      }
    }
    if (connection != null) {
      connection.closeAsync();
    }
    Throwable cause =
        failure != null ? failure : new IllegalStateException("the Redis backend is closed");
    waited.forEach(command -> command.fail().accept(cause));
  }

  private static <T> void relay(CompletableFuture<T> from, CompletableFuture<T> to) {
    from.whenComplete(
        (value, failure) -> {
          if (failure == null) {
            to.complete(value);
          } else {
            to.completeExceptionally(failure);
          }
        });
  }

  /**
   * Collects every key matching a pattern, by SCAN (many short calls, never a blocking KEYS).
   *
   * @param pattern a glob pattern
   * @return the keys; a key may appear twice if the keyspace was resized meanwhile
   */
  CompletableFuture<List<String>> scan(String pattern) {
    return scanFrom(ScanCursor.INITIAL, ScanArgs.Builder.matches(pattern).limit(SCAN_COUNT))
        .thenApply(List::copyOf);
  }

  private CompletableFuture<List<String>> scanFrom(ScanCursor cursor, ScanArgs args) {
    return execute(commands -> commands.scan(cursor, args))
        .thenCompose(
            page -> {
              if (page.isFinished()) {
                return CompletableFuture.completedFuture(new ArrayList<>(page.getKeys()));
              }
              return scanFrom(page, args)
                  .thenApply(
                      rest -> {
                        rest.addAll(page.getKeys());
                        return rest;
                      });
            });
  }

  private <T> CompletableFuture<T> send(
      StatefulRedisConnection<String, String> connection,
      Function<RedisAsyncCommands<String, String>, ? extends CompletionStage<T>> command) {
    CompletableFuture<T> reply = command.apply(connection.async()).toCompletableFuture();
    reply.whenComplete(
        (value, failure) -> {
          Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
          if (cause instanceof RedisCommandTimeoutException
              || cause instanceof RedisReadOnlyException) {
            retire(connection);
          }
        });
    return reply;
  }

  private synchronized void retire(StatefulRedisConnection<String, String> connection) {
    if (current == connection) {
      closeCurrent();
    }
  }

  /**
   * Closes the current connection, once: one that dropped by itself still holds its resources until
   * closed, and Lettuce warns about a second close.
   */
  private void closeCurrent() {
    if (!currentClosed) {
      currentClosed = true;
      current.closeAsync();
    }
  }

  @Override
  public void close() {
    StatefulRedisConnection<String, String> last;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (currentClosed) {
        return;
      }
      currentClosed = true;
      last = current;
    }
    last.close();
  }

  /** A command waiting for a new connection: how to send it, and how to fail it. */
  private record WaitingCommand(
      Consumer<StatefulRedisConnection<String, String>> send, Consumer<Throwable> fail) {}
}
