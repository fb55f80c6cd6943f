package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pins latchkey-jdbc's module descriptor: one exported package, the backend provider, nothing
 * opened, and the schema files readable from inside the module.
 */
class JdbcModuleTest {

  @Test
  void exportsTheBackendPackageAndProvidesTheJdbcScheme() throws Exception {
    URL mainClasses = JdbcBackend.class.getProtectionDomain().getCodeSource().getLocation();
    ModuleDescriptor module;
    try (InputStream in =
        Files.newInputStream(Path.of(mainClasses.toURI()).resolve("module-info.class"))) {
      module = ModuleDescriptor.read(in);
    }
    assertThat(module.name()).isEqualTo("io.latchkey.jdbc");
    assertThat(module.exports())
        .extracting(ModuleDescriptor.Exports::source)
        .containsExactly("io.latchkey.jdbc");
    assertThat(module.opens()).isEmpty();
    assertThat(module.requires())
        .filteredOn(
            requires ->
                requires.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE))
        .extracting(ModuleDescriptor.Requires::name)
        .containsExactlyInAnyOrder("io.latchkey", "java.sql");
    assertThat(module.provides())
        .extracting(ModuleDescriptor.Provides::service, ModuleDescriptor.Provides::providers)
        .containsExactly(
            tuple(
                "io.latchkey.spi.BackendProvider",
                List.of("io.latchkey.jdbc.JdbcBackendProvider")));
  }

  @Test
  void everyDialectsSchemaIsReadableFromTheModule() {
    for (SqlDialect dialect : SqlDialect.values()) {
      assertThat(new TableSchema(dialect, "latchkey_").ddl())
          .as(dialect.schemaResource())
          .isNotEmpty();
    }
  }
}
