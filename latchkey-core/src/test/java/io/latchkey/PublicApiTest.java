package io.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pins what latchkey-core exports, so that a type does not become public API by accident: every
 * public type must be listed here, on purpose.
 */
class PublicApiTest {
  @Test
  void apiPackageExportsExactlyTheseTypes() throws Exception {
    assertThat(publicTypes("io.latchkey"))
        .containsExactlyInAnyOrder(
            "BackendTimeoutException",
            "BackendUnavailableException",
            "ClientInfo",
            "DistributedCountDownLatch",
            "DistributedLock",
            "DistributedMutex",
            "DistributedReadWriteLock",
            "DistributedSemaphore",
            "Feature",
            "HolderInfo",
            "LatchInfo",
            "Latchkey",
            "LatchkeyException",
            "LatchkeyOptions",
            "LatchkeyOptions$Builder",
            "LeaderElection",
            "LeaderTerm",
            "LeadershipListener",
            "Lease",
            "LeaseListener",
            "LeaseLostException",
            "LeaseSource",
            "LeasedSemaphore",
            "LeasedSemaphoreInfo",
            "LockAdmin",
            "LockInfo",
            "LockMode",
            "LockTimeoutException",
            "LockUpgradeException",
            "MultiLease",
            "MultiLock",
            "OwnerToken",
            "Primitive",
            "LatchkeyObserver",
            "LatchkeyObserver$AcquireObservation",
            "PermitInfo",
            "SemaphoreInfo",
            "Ticker",
            "UnsupportedFeatureException");
  }

  @Test
  void spiPackageExportsExactlyTheseTypes() throws Exception {
    assertThat(publicTypes("io.latchkey.spi"))
        .containsExactlyInAnyOrder(
            "AcquireResult",
            "AcquireResult$Status",
            "AdminStore",
            "BackendContext",
            "BackendFactory",
            "CallerWaits",
            "BackendProvider",
            "FenceStore",
            "FenceStore$Epoch",
            "GrantEvents",
            "GrantRef",
            "HandOverResult",
            "HolderRef",
            "LatchStore",
            "LatchkeyBackend",
            "LeasedSemaphoreStore",
            "LockRequest",
            "LockStore",
            "ReleaseResult",
            "RenewResult",
            "ResourceType",
            "SemaphoreStore",
            "WaitingAttempts",
            "Wakeup",
            "WakeupBus",
            "WakeupBus$Subscription");
  }

  @Test
  void engineAndMemoryPackagesExportOnlyTheirEntryPoints() throws Exception {
    assertThat(publicTypes("io.latchkey.internal"))
        .containsExactlyInAnyOrder("BackendRegistry", "LatchkeyClient", "MultiLockHandle");
    assertThat(publicTypes("io.latchkey.memory"))
        .containsExactlyInAnyOrder("MemoryBackendProvider", "MemoryLockServer");
  }

  @Test
  void moduleExportsTheApiTheSpiAndTheMemoryBackendButNotTheEngine() throws Exception {
    ModuleDescriptor module = mainModule();
    assertThat(module.name()).isEqualTo("io.latchkey");
    assertThat(module.exports())
        .allSatisfy(export -> assertThat(export.isQualified()).isFalse())
        .extracting(ModuleDescriptor.Exports::source)
        .containsExactlyInAnyOrder("io.latchkey", "io.latchkey.spi", "io.latchkey.memory");
    assertThat(module.opens()).isEmpty();
    assertThat(module.uses()).containsExactly("io.latchkey.spi.BackendProvider");
    assertThat(module.provides())
        .singleElement()
        .satisfies(
            provides -> {
              assertThat(provides.service()).isEqualTo("io.latchkey.spi.BackendProvider");
              assertThat(provides.providers())
                  .containsExactly("io.latchkey.memory.MemoryBackendProvider");
            });
  }

  /**
   * The compiled module-info of the main classes, read whether the tests run as a module or not.
   */
  private static ModuleDescriptor mainModule() throws IOException, URISyntaxException {
    URL mainClasses = Latchkey.class.getProtectionDomain().getCodeSource().getLocation();
    try (InputStream in =
        Files.newInputStream(Path.of(mainClasses.toURI()).resolve("module-info.class"))) {
      return ModuleDescriptor.read(in);
    }
  }

  private static List<String> publicTypes(String packageName)
      throws IOException, URISyntaxException {
    // The main classes, not the test classes that share the package names.
    URL mainClasses = Latchkey.class.getProtectionDomain().getCodeSource().getLocation();
    Path packageDirectory = Path.of(mainClasses.toURI()).resolve(packageName.replace('.', '/'));
    try (Stream<Path> files = Files.list(packageDirectory)) {
      return files
          .map(path -> path.getFileName().toString())
          .filter(file -> file.endsWith(".class") && !file.equals("package-info.class"))
          .map(file -> file.substring(0, file.length() - ".class".length()))
          .filter(simple -> isPublic(packageName + "." + simple))
          .sorted()
          .toList();
    }
  }

  private static boolean isPublic(String className) {
    try {
      Class<?> type = Class.forName(className, false, PublicApiTest.class.getClassLoader());
      if (type.isAnonymousClass() || type.isSynthetic()) {
        return false;
      }
      for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
        if (!Modifier.isPublic(c.getModifiers())) {
          return false;
        }
      }
      return true;
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}
