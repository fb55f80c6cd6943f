package io.latchkey.spring;

import io.latchkey.jdbc.JdbcBackend;
import io.latchkey.spi.BackendFactory;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/** The application's {@link DataSource}: the relational database backend over its pool. */
final class DataSourceReuse extends ReusableClient<DataSource> {
  DataSourceReuse(ConfigurableListableBeanFactory beans) {
    super(
        beans,
        DataSource.class,
        LatchkeyProperties.Reuse.JDBC,
        "a DataSource bean (with latchkey-jdbc)");
  }

  @Override
  BackendFactory backend(DataSource dataSource, String name, LatchkeyProperties properties) {
    refuseKeyPrefix(properties, "JDBC");
    LatchkeyProperties.Jdbc settings = properties.getJdbc();
    JdbcBackend.Builder builder =
        JdbcBackend.builder(dataSource).createSchema(settings.isCreateSchema());
    LatchkeyProperties.set(
        "latchkey.jdbc.table-prefix", settings.getTablePrefix(), builder::tablePrefix);
    return builder.build();
  }
}
