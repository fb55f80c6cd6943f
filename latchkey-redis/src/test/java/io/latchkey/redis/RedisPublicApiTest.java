package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pins what latchkey-redis exports, as PublicApiTest does for latchkey-core: every public type is
 * listed here on purpose.
 */
class RedisPublicApiTest {
  @Test
  void thePackageExportsExactlyTheseTypes() throws Exception {
    Path classes =
        Path.of(RedisBackend.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            .resolve("io/latchkey/redis");
    List<String> publicTypes;
    try (Stream<Path> files = Files.list(classes)) {
      publicTypes =
          files
              .map(path -> path.getFileName().toString())
              .filter(file -> file.endsWith(".class") && !file.equals("package-info.class"))
              .map(file -> file.substring(0, file.length() - ".class".length()))
              .filter(RedisPublicApiTest::isPublic)
              .sorted()
              .toList();
    }
    assertThat(publicTypes)
        .containsExactlyInAnyOrder("RedisBackend", "RedisBackend$Builder", "RedisBackendProvider");
  }

  /** A type is API when it and every class enclosing it are public. */
  private static boolean isPublic(String simpleName) {
    Class<?> type;
    try {
      type = Class.forName("io.latchkey.redis." + simpleName);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
    return !type.isAnonymousClass()
        && Stream.<Class<?>>iterate(type, Objects::nonNull, Class::getEnclosingClass)
            .allMatch(c -> Modifier.isPublic(c.getModifiers()));
  }
}
