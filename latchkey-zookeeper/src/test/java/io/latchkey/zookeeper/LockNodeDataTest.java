package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The text of a lock node's data: the fields written without a map or an encoder's buffers must be
 * exactly what percent-encoding every value with {@link URLEncoder} gives (older clients and
 * operators read it), and read back as written.
 */
class LockNodeDataTest {
  @Test
  void aLockNodesFieldsAreWrittenInOrderAsUrlEncoderEncodesThem() {
    LockNodeData data =
        new LockNodeData(
            "c0ffee-1.2_3*x:7", "client-1", "host.example", 42, 1, 0, 30_000, true, "ab12", 5);

    assertThat(new String(data.encode(), StandardCharsets.UTF_8))
        .isEqualTo(
            "owner="
                + URLEncoder.encode("c0ffee-1.2_3*x:7", StandardCharsets.UTF_8)
                + "\nclient=client-1\nhost=host.example\npid=42\nexclusive=1\nshared=0"
                + "\nsessionTimeoutMs=30000\nwaiting=1\ncreation=ab12\noffset=5\n");
    assertThat(LockNodeData.decode(data.encode())).isEqualTo(data);
  }

  @Test
  void everyCharacterIsEncodedAsUrlEncoderEncodesIt() {
    String kept = "azAZ09.-*_";
    for (char c = 0; c < 0x180; c++) {
      String value = kept + c + "é~ /+%=\n";
      assertThat(
              new String(new NodeFields.Writer().field("k", value).bytes(), StandardCharsets.UTF_8))
          .as("value with U+%04X", (int) c)
          .isEqualTo("k=" + URLEncoder.encode(value, StandardCharsets.UTF_8) + "\n");
      assertThat(
              new String(
                  new NodeFields.Writer().field("k", kept + c).bytes(), StandardCharsets.UTF_8))
          .as("value ending in U+%04X", (int) c)
          .isEqualTo("k=" + URLEncoder.encode(kept + c, StandardCharsets.UTF_8) + "\n");
    }
    String ascii = "owner:7 with/all=the+odd%chars~\t\n!";
    assertThat(
            new String(new NodeFields.Writer().field("k", ascii).bytes(), StandardCharsets.UTF_8))
        .isEqualTo("k=" + URLEncoder.encode(ascii, StandardCharsets.UTF_8) + "\n");
    LockNodeData odd =
        new LockNodeData("owner with spaces/and=signs\n", "c", "", 0, 0, 2, 0, false, "", 0);
    assertThat(LockNodeData.decode(odd.encode())).isEqualTo(odd);
  }
}
