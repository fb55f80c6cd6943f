package io.latchkey.spring;

import io.latchkey.spi.BackendFactory;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.Ordered;

/**
 * A kind of client of the application's that the latchkey client can share when {@code
 * latchkey.url} is not set: one subclass per backend module, registered only when its classes are
 * on the class path, and tried in their order by {@code latchkey.reuse=auto}.
 *
 * @param <T> the type of the application's bean
 */
abstract class ReusableClient<T> implements Ordered {
  private final ConfigurableListableBeanFactory beans;
  private final Class<T> type;
  private final LatchkeyProperties.Reuse kind;
  private final String wanted;

  /**
   * @param beans where the application's bean is
   * @param type its type
   * @param kind the value of {@code latchkey.reuse} that names it
   * @param wanted what the application must have, for messages, e.g. "a DataSource bean (with
   *     latchkey-jdbc)"
   */
  ReusableClient(
      ConfigurableListableBeanFactory beans,
      Class<T> type,
      LatchkeyProperties.Reuse kind,
      String wanted) {
    this.beans = beans;
    this.type = type;
    this.kind = kind;
    this.wanted = wanted;
  }

  /** The order in which {@code latchkey.reuse=auto} tries the kinds: Redis, JDBC, ZooKeeper. */
  @Override
  public int getOrder() {
    return switch (kind) {
      case REDIS -> 1;
      case JDBC -> 2;
      case ZOOKEEPER -> 3;
      case AUTO, NONE -> Ordered.LOWEST_PRECEDENCE;
    };
  }

  final LatchkeyProperties.Reuse kind() {
    return kind;
  }

  final String wanted() {
    return wanted;
  }

  /**
   * @param properties the {@code latchkey.*} properties
   * @return the backend over the application's bean, or null if the application has none (or
   *     several, none of them primary)
   * @throws IllegalArgumentException naming the property that does not fit this backend
   */
  final @Nullable Reused find(LatchkeyProperties properties) {
    String name = uniqueBeanName();
    if (name == null) {
      return null;
    }
    return new Reused(
        name,
        type.getSimpleName() + " '" + name + "'",
        backend(beans.getBean(name, type), name, properties));
  }

  /**
   * @param bean the application's bean
   * @param name its name, for messages
   * @param properties the {@code latchkey.*} properties
   * @return a backend over it
   * @throws IllegalArgumentException naming the property that does not fit this backend
   */
  abstract BackendFactory backend(T bean, String name, LatchkeyProperties properties);

  /** The name of the one bean of the type, or of the primary one of several; else null. */
  private @Nullable String uniqueBeanName() {
    String[] names = beans.getBeanNamesForType(type, false, false);
    if (names.length == 1) {
      return names[0];
    }
    List<String> primary = new ArrayList<>();
    for (String name : names) {
      if (beans.containsBeanDefinition(name) && beans.getBeanDefinition(name).isPrimary()) {
        primary.add(name);
      }
    }
    return primary.size() == 1 ? primary.get(0) : null;
  }

  /**
   * @throws IllegalArgumentException if {@code latchkey.key-prefix} is set, for backends that have
   *     none
   */
  static void refuseKeyPrefix(LatchkeyProperties properties, String backend) {
    if (properties.getKeyPrefix() != null) {
      throw new IllegalArgumentException(
          "latchkey.key-prefix is only understood by the Redis backends, not by the "
              + backend
              + " backend that latchkey.reuse chose");
    }
  }

  /**
   * A backend over one of the application's beans.
   *
   * @param beanName the bean's name, so that the latchkey client is closed before it
   * @param what what is reused, for the log, e.g. "DataSource 'dataSource'"
   * @param backend the backend
   */
  record Reused(String beanName, String what, BackendFactory backend) {}
}
