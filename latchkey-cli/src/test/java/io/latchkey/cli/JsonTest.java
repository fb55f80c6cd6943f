package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {
  @Test
  void writesObjectsArraysAndScalarsInOrder() {
    Map<String, @Nullable Object> document = new LinkedHashMap<>();
    document.put("name", "orders/42");
    document.put("held", true);
    document.put("holds", 2);
    document.put("token", 9_007_199_254_740_993L);
    document.put("thread", null);
    document.put("holders", List.of(Map.of("a", 1), List.of()));
    assertThat(Json.write(document))
        .isEqualTo(
            "{\"name\":\"orders/42\",\"held\":true,\"holds\":2,\"token\":9007199254740993,"
                + "\"thread\":null,\"holders\":[{\"a\":1},[]]}");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "plain",
        "quote \" and backslash \\ and slash /",
        "new\nline\rtab\tform\fback\b",
        "control \u0001\u001f and delete \u007f",
        "unicode é ✓ 😀 and separators \u2028\u2029",
        "lone surrogates \ud800 and \udc00",
        ""
      })
  void escapesEveryStringIntoAsciiThatReadsBack(String text) {
    String written = Json.write(Map.of("key " + text, text));
    assertThat(written.chars()).allMatch(c -> c >= 0x20 && c < 0x7f);
    assertThat(JsonParser.object(written)).containsEntry("key " + text, text);
  }

  @Test
  void escapesTheUsualCharactersShortAndTheRestAsUnicode() {
    assertThat(Json.write("a\"b\\c\nd\te\u0000é😀"))
        .isEqualTo("\"a\\\"b\\\\c\\nd\\te\\u0000\\u00e9\\ud83d\\ude00\"");
  }

  @Test
  void writesNullElements() {
    List<@Nullable Object> list = new ArrayList<>(Arrays.asList(1, null, "x"));
    assertThat(Json.write(list)).isEqualTo("[1,null,\"x\"]");
  }

  @Test
  void refusesValuesWithoutAJsonForm() {
    assertThatThrownBy(() -> Json.write(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Double");
  }
}
