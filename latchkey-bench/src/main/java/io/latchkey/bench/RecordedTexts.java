package io.latchkey.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The SQL texts a JDBC client prepares, with the parameters it binds, recorded through a {@link
 * DataSource} that wraps the real one, so that they can be replayed by plain JDBC: what the
 * database has to do for an operation, without the client's code. Only the recording thread's
 * statements are kept (a backend's listener or pinger on another thread is not the operation).
 */
final class RecordedTexts {
  /**
   * One text as prepared, its parameters by index, and whether it ran with autocommit on (a
   * statement in the server's implicit transaction), as the connection was when it was executed.
   */
  record Text(String sql, Map<Integer, Object> parameters, AtomicBoolean executedInAutoCommit) {
    boolean autoCommit() {
      return executedInAutoCommit.get();
    }
  }

  private final List<Text> texts = new ArrayList<>();
  private volatile @Nullable Thread recording;

  /** Starts keeping the calling thread's texts, dropping any kept before. */
  void start() {
    synchronized (texts) {
      texts.clear();
    }
    recording = Thread.currentThread();
  }

  /** Stops and answers the texts kept since {@link #start()}. */
  List<Text> stop() {
    recording = null;
    synchronized (texts) {
      return List.copyOf(texts);
    }
  }

  /** The data source to give the client: its connections record what they prepare. */
  DataSource wrap(DataSource target) {
    return proxy(
        DataSource.class,
        target,
        (method, args, result) ->
            result instanceof Connection connection && method.getName().equals("getConnection")
                ? connection(connection)
                : result);
  }

  private Connection connection(Connection target) {
    return proxy(
        Connection.class,
        target,
        (method, args, result) ->
            result instanceof PreparedStatement statement
                    && method.getName().equals("prepareStatement")
                    && Thread.currentThread() == recording
                ? statement(statement, (String) args[0], target)
                : result);
  }

  private PreparedStatement statement(PreparedStatement target, String sql, Connection connection) {
    Map<Integer, Object> parameters = new TreeMap<>();
    AtomicBoolean autoCommit = new AtomicBoolean();
    synchronized (texts) {
      texts.add(new Text(sql, parameters, autoCommit));
    }
    return proxy(
        PreparedStatement.class,
        target,
        (method, args, result) -> {
          // setString, setLong, setBoolean...: (index, value)
          if (method.getName().startsWith("set")
              && args.length == 2
              && method.getParameterTypes()[0] == int.class) {
            parameters.put((Integer) args[0], args[1]);
          } else if (method.getName().startsWith("execute")) {
            autoCommit.set(connection.getAutoCommit());
          }
          return result;
        });
  }

  /** What a wrapped call answers: the target's answer, or a wrapper of it. */
  @FunctionalInterface
  private interface Answer {
    @Nullable Object of(Method method, Object[] args, @Nullable Object result) throws SQLException;
  }

  private static <T> T proxy(Class<T> type, T target, Answer answer) {
    InvocationHandler handler =
        (self, method, args) -> {
          Object[] arguments = args == null ? new Object[0] : args;
          try {
            return answer.of(method, arguments, method.invoke(target, arguments));
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return type.cast(
        Proxy.newProxyInstance(
            RecordedTexts.class.getClassLoader(), new Class<?>[] {type}, handler));
  }

  /**
   * Sends texts on a connection as recorded, each as its own prepared statement with autocommit as
   * it was, reads every result, and commits what is left open (as the client did after them).
   *
   * @param connection autocommit off, as it is left
   * @param texts what was recorded
   * @param recordedToken a value that the recorded texts bound and that the replay must replace (a
   *     fencing token the recorded acquire answered); ignored when {@code token} is negative
   * @param token what replaces it
   * @return the first column of the last row of the last result that the texts answered (a token; 1
   *     for a row whose first column is not a number), or -1 if that result had no row
   */
  static long replay(Connection connection, List<Text> texts, long recordedToken, long token)
      throws SQLException {
    long answered = -1;
    for (Text text : texts) {
      connection.setAutoCommit(text.autoCommit());
      try (PreparedStatement statement = connection.prepareStatement(text.sql())) {
        for (Map.Entry<Integer, Object> parameter : text.parameters().entrySet()) {
          Object value = parameter.getValue();
          if (token >= 0 && value instanceof Long number && number == recordedToken) {
            value = token;
          }
          statement.setObject(parameter.getKey(), value);
        }
        boolean rows = statement.execute();
        while (true) {
          if (rows) {
            answered = -1;
            try (ResultSet result = statement.getResultSet()) {
              while (result.next()) {
                answered = result.getObject(1) instanceof Number number ? number.longValue() : 1;
              }
            }
          } else if (statement.getUpdateCount() < 0) {
            break;
          }
          rows = statement.getMoreResults();
        }
      }
    }
    if (connection.getAutoCommit()) {
      connection.setAutoCommit(false);
    } else {
      connection.commit();
    }
    return answered;
  }
}
