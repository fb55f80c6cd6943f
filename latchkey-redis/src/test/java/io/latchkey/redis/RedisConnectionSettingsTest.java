package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RedisConnectionSettingsTest {
  private static RedisConnectionSettings parse(String uri) {
    return RedisConnectionSettings.parse(URI.create(uri));
  }

  private static RedisCredentials credentials(String uri) {
    RedisCredentials credentials =
        parse(uri).redisUri().getCredentialsProvider().resolveCredentials().block();
    assertThat(credentials).isNotNull();
    return credentials;
  }

  private static String password(String uri) {
    return new String(credentials(uri).getPassword());
  }

  @Test
  void standaloneWithDefaults() {
    RedisConnectionSettings settings = parse("redis://localhost");
    RedisURI redis = settings.redisUri();

    assertThat(redis.getHost()).isEqualTo("localhost");
    assertThat(redis.getPort()).isEqualTo(6379);
    assertThat(redis.getDatabase()).isZero();
    assertThat(redis.isSsl()).isFalse();
    assertThat(settings.keyPrefix()).isEqualTo("latchkey:");
    assertThat(settings.description()).isEqualTo("redis://localhost");
  }

  @Test
  void aclUserPasswordDatabaseAndOptions() {
    String uri =
        "rediss://app:p%40ss%3Aword+x@redis.example.com:6380/3"
            + "?prefix=orders:&clientName=web-1&verifyPeer=ca";
    RedisConnectionSettings settings = parse(uri);
    RedisURI redis = settings.redisUri();

    assertThat(credentials(uri).getUsername()).isEqualTo("app");
    assertThat(password(uri)).isEqualTo("p@ss:word+x");
    assertThat(redis.getPort()).isEqualTo(6380);
    assertThat(redis.getDatabase()).isEqualTo(3);
    assertThat(redis.isSsl()).isTrue();
    assertThat(redis.getVerifyMode()).isEqualTo(SslVerifyMode.CA);
    assertThat(redis.getClientName()).isEqualTo("web-1");
    assertThat(settings.keyPrefix()).isEqualTo("orders:");
    assertThat(settings.description())
        .isEqualTo("rediss://redis.example.com:6380/3?prefix=orders:")
        .doesNotContain("p@ss")
        .doesNotContain("app");
  }

  @Test
  void aPasswordWithoutUserIsTheDefaultUsersPassword() {
    assertThat(credentials("redis://:secret@h").hasUsername()).isFalse();
    assertThat(password("redis://:secret@h")).isEqualTo("secret");
    assertThat(password("redis://secret@h")).isEqualTo("secret");
  }

  @Test
  void sentinelInLettuceSyntax() {
    String uri = "redis-sentinel://:pw@s1:26379,s2:26380,s3#mymaster";
    RedisConnectionSettings settings = parse(uri);
    RedisURI redis = settings.redisUri();

    assertThat(redis.getSentinelMasterId()).isEqualTo("mymaster");
    assertThat(redis.getSentinels())
        .extracting(RedisURI::getHost, RedisURI::getPort)
        .containsExactly(tuple("s1", 26379), tuple("s2", 26380), tuple("s3", 26379));
    assertThat(password(uri)).isEqualTo("pw");
    assertThat(settings.description()).isEqualTo("redis-sentinel://s1:26379,s2:26380,s3#mymaster");
  }

  @Test
  void clusterSeedsShareCredentialsAndOptions() {
    String uri = "redis-cluster://:pw@h1:7000,h2,h3:7002/?prefix=orders:&clientName=web-1";
    RedisConnectionSettings settings = parse(uri);

    assertThat(settings.topology()).isEqualTo(RedisConnectionSettings.Topology.CLUSTER);
    assertThat(settings.redisUris())
        .extracting(RedisURI::getHost, RedisURI::getPort, RedisURI::getClientName)
        .containsExactly(
            tuple("h1", 7000, "web-1"), tuple("h2", 6379, "web-1"), tuple("h3", 7002, "web-1"));
    assertThat(settings.redisUris())
        .allSatisfy(
            seed ->
                assertThat(seed.getCredentialsProvider().resolveCredentials().block())
                    .satisfies(c -> assertThat(new String(c.getPassword())).isEqualTo("pw")));
    assertThat(settings.keyPrefix()).isEqualTo("orders:");
    assertThat(settings.description())
        .isEqualTo("redis-cluster://h1:7000,h2,h3:7002?prefix=orders:");
    assertThat(parse("rediss-cluster://h1?verifyPeer=none").redisUris())
        .singleElement()
        .satisfies(
            seed -> {
              assertThat(seed.isSsl()).isTrue();
              assertThat(seed.getVerifyMode()).isEqualTo(SslVerifyMode.NONE);
            });
  }

  @Test
  void waitingForReplicasIsOffUnlessAsked() {
    assertThat(parse("redis://h").replicaWait().enabled()).isFalse();
    assertThat(parse("redis://h?waitReplicas=0").replicaWait().enabled()).isFalse();

    RedisConnectionSettings settings = parse("redis://h?waitReplicas=2&waitTimeout=250ms");
    assertThat(settings.replicaWait()).isEqualTo(new ReplicaWait(2, Duration.ofMillis(250)));
    assertThat(settings.description()).isEqualTo("redis://h?waitReplicas=2&waitTimeout=250ms");
    assertThat(parse("redis://h?waitReplicas=1").replicaWait().timeout())
        .isEqualTo(Duration.ofMillis(100));
    assertThat(parse("redis://h?waitReplicas=1&waitTimeout=2s").replicaWait().timeout())
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(parse("redis://h?waitReplicas=1&waitTimeout=300").replicaWait().timeout())
        .isEqualTo(Duration.ofMillis(300));
  }

  @Test
  void ipv6InBrackets() {
    RedisURI redis = parse("redis://[::1]:7000").redisUri();
    assertThat(redis.getHost()).isEqualTo("::1");
    assertThat(redis.getPort()).isEqualTo(7000);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "memcached://localhost | scheme must be one of",
        "redis:localhost | names no host",
        "redis:/// | names no host",
        "redis://h:0 | port of 'h' must be 1 to 65535",
        "redis://h:70000 | port of 'h' must be 1 to 65535",
        "redis://h:abc | port of 'h' must be 1 to 65535",
        "redis://h/x | path must be a database number",
        "redis://h/1/2 | path must be a database number",
        "redis://a:1,b:2 | several are for redis-sentinel",
        "redis-sentinel://s1:26379 | names the master after '#'",
        "redis://h#master | only sentinel URIs",
        "redis://h?timeout=5 | unknown option 'timeout'",
        "redis://h?prefix | is not name=value",
        "redis://h?prefix=a&prefix=b | given twice",
        "redis://h?prefix=a%7Bb%7D | without '{' or '}'",
        "redis://h?verifyPeer=full | needs TLS",
        "rediss://h?verifyPeer=maybe | full, ca or none",
        "redis://user:@h | has no password",
        "redis-cluster://h1,h2/3 | a cluster has only database 0",
        "redis-cluster://h1,h2#mymaster | only sentinel URIs",
        "redis-cluster://h1?verifyPeer=ca | needs TLS",
        "redis://h?trustedCertificates=/etc/ca.pem | trustedCertificates needs TLS",
        "rediss://h?trustedCertificates=/no/such/dir/ca.pem | names no file",
        "rediss://h?trustedCertificates=/ | names no file",
        "redis://h?waitTimeout=1s | waitTimeout needs waitReplicas",
        "redis://h?waitReplicas=two | waitReplicas must be a number of replicas",
        "redis://h?waitReplicas=1&waitTimeout=0ms | above 0 and at most 1 minute",
        "redis://h?waitReplicas=1&waitTimeout=2m | must be like 100ms or 2s",
        "redis://h?waitReplicas=1&waitTimeout=61s | above 0 and at most 1 minute",
      })
  void badUrisSayWhatIsWrong(String uri, String problem) {
    assertThatThrownBy(() -> parse(uri))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(problem)
        .hasMessageStartingWith("invalid Redis URI");
  }

  /** A self-signed EC CA certificate (PEM), valid until 2126; its key is not kept. */
  private static final String CA_PEM =
      """
      -----BEGIN CERTIFICATE-----
      MIIBlzCCAT2gAwIBAgIUJxs+BZ/k2sH5W9YCO4JYJBvmkTQwCgYIKoZIzj0EAwIw
      IDEeMBwGA1UEAwwVbGF0Y2hrZXkgdW5pdC10ZXN0IENBMCAXDTI2MTEyMjAyMTE0
      N1oYDzIxMjYxMDI5MDIxMTQ3WjAgMR4wHAYDVQQDDBVsYXRjaGtleSB1bml0LXRl
      c3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASQe9YTNfD9mSC0syBWxLnX
      Q9K9o7Fwn/cA+WHCMFhnd5R978YNKMs0wmGamQsnY+mIOk2H3DK2EwEjhvDgz7I0
      o1MwUTAdBgNVHQ4EFgQUstmNLz+bQqCjaHTUJdc53RpzezEwHwYDVR0jBBgwFoAU
      stmNLz+bQqCjaHTUJdc53RpzezEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
      AgNIADBFAiAT+bNXbuN2XT5Zro3Uxdcri00jvER5awi1FJbsM2Dt3wIhAPyEQLi8
      fswblqodbUtrGIl4XBPaKi5vQEkKsxvU70UM
      -----END CERTIFICATE-----
      """;

  private static String trusting(Path file) {
    return "rediss://127.0.0.1:6380?trustedCertificates="
        + file.toAbsolutePath().toUri().getRawPath();
  }

  @Test
  void trustedCertificatesTrustTheirCaForThisBackendOnly(@TempDir Path directory) throws Exception {
    Path ca = Files.writeString(directory.resolve("my ca.pem"), CA_PEM, StandardCharsets.UTF_8);
    RedisConnectionSettings settings = parse(trusting(ca));

    assertThat(settings.redisUri().isSsl()).isTrue();
    assertThat(settings.redisUri().getVerifyMode()).isEqualTo(SslVerifyMode.FULL);
    // Lettuce reads the file when it builds the TLS context, as on every connection.
    assertThat(settings.sslOptions().createSslContextBuilder()).isNotNull();
    assertThat(settings.description()).isEqualTo("rediss://127.0.0.1:6380");
    assertThat(
            parse(
                    "rediss-cluster://h1,h2?verifyPeer=ca&trustedCertificates="
                        + ca.toUri().getRawPath())
                .sslOptions())
        .isNotSameAs(parse("rediss://h").sslOptions());
  }

  @Test
  void trustedCertificatesMustHoldCertificates(@TempDir Path directory) throws IOException {
    Path garbage = Files.writeString(directory.resolve("ca.pem"), "not a certificate\n");
    Path empty = Files.createFile(directory.resolve("empty.pem"));

    assertThatThrownBy(() -> parse(trusting(garbage)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid Redis URI")
        .hasMessageContaining("does not hold PEM certificates");
    assertThatThrownBy(() -> parse(trusting(empty)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not hold PEM certificates");
  }

  @Test
  void trustedCertificatesMustBeReadable(@TempDir Path directory) throws IOException {
    Path ca = Files.writeString(directory.resolve("ca.pem"), CA_PEM, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(ca, PosixFilePermissions.fromString("---------"));
    Assumptions.assumeFalse(Files.isReadable(ca), "running as a user who reads any file (root)");

    assertThatThrownBy(() -> parse(trusting(ca)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot be read");
  }

  @Test
  void errorsNeverShowThePassword() {
    assertThatThrownBy(() -> parse("redis://admin:hunter2@h:99999"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redis://***@h:99999")
        .message()
        .doesNotContain("hunter2")
        .doesNotContain("admin");
  }

  private static String identityOf(String uri) {
    return RedisBackend.identity(RedisConnectionSettings.parse(URI.create(uri)));
  }

  @Test
  void identityDoesNotDependOnHowTheUriIsSpelled() {
    assertThat(identityOf("redis://localhost:6379"))
        .isEqualTo(identityOf("redis://127.0.0.1:6379/0"))
        .isEqualTo(identityOf("redis://user:secret@127.0.0.1:6379?clientName=app"))
        .isEqualTo(identityOf("rediss://127.0.0.1:6379"));
    assertThat(identityOf("redis-cluster://127.0.0.1:7001,127.0.0.1:7000"))
        .isEqualTo(identityOf("redis-cluster://127.0.0.1:7000,localhost:7001"));
    assertThat(identityOf("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380#main"))
        .isEqualTo(identityOf("redis-sentinel://localhost:26380,127.0.0.1:26379#main"));
  }

  @Test
  void identityTellsDifferentLockServicesApart() {
    String base = identityOf("redis://127.0.0.1:6379");
    assertThat(identityOf("redis://127.0.0.1:6380")).isNotEqualTo(base);
    assertThat(identityOf("redis://127.0.0.1:6379/1")).isNotEqualTo(base);
    assertThat(identityOf("redis://127.0.0.1:6379?prefix=other:")).isNotEqualTo(base);
    assertThat(identityOf("redis-sentinel://127.0.0.1:26379#main"))
        .isNotEqualTo(identityOf("redis-sentinel://127.0.0.1:26379#other"));
  }
}
