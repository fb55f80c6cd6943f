package io.latchkey.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisTlsTestServerTest {

  @Test
  void speaksTlsOnlyAndTellsWhereItsCaIs() throws Exception {
    try (RedisTestServer server = RedisTestServer.builder().tls().start()) {
      assertThat(server.isTls()).isTrue();
      assertThat(server.tlsUri()).isEqualTo("rediss://127.0.0.1:" + server.port());
      assertThat(server.uri()).isEqualTo(server.tlsUri());
      assertThat(server.command("PING")).isEqualTo("PONG");
      assertThat(server.command("CONFIG", "GET", "port")).isEqualTo(List.of("port", "0"));
      assertThat(server.command("CONFIG", "GET", "tls-port"))
          .isEqualTo(List.of("tls-port", Integer.toString(server.port())));
      assertThat(server.info("server"))
          .containsEntry("process_id", Long.toString(server.pid().orElseThrow()));

      Path ca = server.caCertificate();
      assertThat(ca).isRegularFile().startsWith(server.logFile().getParent());
      X509Certificate certificate;
      try (InputStream in = Files.newInputStream(ca)) {
        certificate =
            (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      }
      assertThat(certificate.getBasicConstraints()).isGreaterThanOrEqualTo(0);
    }
  }

  @Test
  void aPlainTextClientGetsNoAnswer() {
    try (RedisTestServer server = RedisTestServer.builder().tls().start()) {
      // The server expects a TLS ClientHello: it resets or closes the connection, never a +PONG.
      assertThatThrownBy(
              () -> {
                try (RespConnection plain =
                    RespConnection.open(server.port(), null, Duration.ofSeconds(5))) {
                  plain.call(List.of("PING"));
                }
              })
          .isInstanceOf(IOException.class);
    }
  }

  @Test
  void aClientThatDoesNotTrustTheCaIsRefused() throws Exception {
    try (RedisTestServer server = RedisTestServer.builder().tls().start()) {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, null, null); // the JVM's default trust store, without our CA
      SSLSocketFactory untrusting = context.getSocketFactory();
      assertThatThrownBy(
              () -> RespConnection.open(server.port(), null, Duration.ofSeconds(5), untrusting))
          .isInstanceOf(SSLHandshakeException.class);
    }
  }

  @Test
  void restartKeepsTheCertificates() {
    try (RedisTestServer server = RedisTestServer.builder().tls().password("secret").start()) {
      Path ca = server.caCertificate();
      server.command("SET", "k", "v");
      server.restart();
      assertThat(server.caCertificate()).isEqualTo(ca).isRegularFile();
      assertThat(server.command("GET", "k")).isNull();
      assertThat(server.command("PING")).isEqualTo("PONG");
    }
  }

  @Test
  void aPlainServerHasNoCa() {
    try (RedisTestServer server = RedisTestServer.start()) {
      assertThat(server.isTls()).isFalse();
      assertThatThrownBy(server::caCertificate)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("builder().tls()");
      assertThatThrownBy(server::tlsUri).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void generatedCertificatesNameTheLoopbackAddress(@TempDir Path directory) throws Exception {
    TestCertificates certificates = TestCertificates.generate(directory);
    X509Certificate server;
    try (InputStream in = Files.newInputStream(certificates.serverCertificate())) {
      server = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    assertThat(server.getSubjectAlternativeNames())
        .contains(List.of(7, "127.0.0.1"), List.of(2, "localhost"));
    assertThat(server.getBasicConstraints()).isEqualTo(-1);
    assertThat(certificates.serverKey()).isRegularFile();
  }
}
