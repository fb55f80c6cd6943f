package io.latchkey.spring;

import io.latchkey.spi.BackendFactory;
import io.latchkey.zookeeper.ZooKeeperBackend;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/** The application's {@link CuratorFramework}: the ZooKeeper backend on its session. */
final class CuratorReuse extends ReusableClient<CuratorFramework> {
  CuratorReuse(ConfigurableListableBeanFactory beans) {
    super(
        beans,
        CuratorFramework.class,
        LatchkeyProperties.Reuse.ZOOKEEPER,
        "a CuratorFramework bean (with latchkey-zookeeper)");
  }

  @Override
  BackendFactory backend(CuratorFramework curator, String name, LatchkeyProperties properties) {
    refuseKeyPrefix(properties, "ZooKeeper");
    ZooKeeperBackend.Builder builder = ZooKeeperBackend.builder(curator);
    LatchkeyProperties.set(
        "latchkey.zookeeper.namespace",
        properties.getZookeeper().getNamespace(),
        builder::namespace);
    return builder.build();
  }
}
