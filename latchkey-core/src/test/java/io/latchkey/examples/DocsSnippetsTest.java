package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the user documentation honest: every Java code block of the pages in {@code
 * docs/primitives/}, {@code docs/backends/memory.md} and {@code docs/errors.md} must be, verbatim,
 * a region marked {@code // tag::NAME[]} … {@code // end::NAME[]} of an example test that the page
 * links to, and every marked region must be shown by a page. So each snippet compiles and runs.
 */
class DocsSnippetsTest {
  private static final Pattern TEST_LINK =
      Pattern.compile("latchkey-core/src/test/java/io/latchkey/examples/(\\w+)\\.java");
  private static final Pattern TAG = Pattern.compile("^\\s*// tag::([\\w-]+)\\[]\\s*$");
  private static final Pattern END = Pattern.compile("^\\s*// end::([\\w-]+)\\[]\\s*$");

  private static final Path MODULE = Path.of(System.getProperty("user.dir"));
  private static final Path DOCS = MODULE.resolveSibling("docs");
  private static final Path EXAMPLES = MODULE.resolve("src/test/java/io/latchkey/examples");

  @Test
  void everySnippetIsATestedRegionAndEveryRegionIsShown() throws IOException {
    List<Path> pages = pages();
    assertThat(pages).isNotEmpty();
    Map<String, String> unused = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    Set<String> linkedClasses = new LinkedHashSet<>();
    for (Path page : pages) {
      String text = Files.readString(page);
      Set<String> classes = new LinkedHashSet<>();
      Matcher link = TEST_LINK.matcher(text);
      while (link.find()) {
        classes.add(link.group(1));
      }
      Map<String, String> regions = new LinkedHashMap<>();
      for (String testClass : classes) {
        if (linkedClasses.add(testClass)) {
          regions(testClass).forEach((tag, body) -> unused.put(testClass + "#" + tag, body));
        }
        regions(testClass).forEach((tag, body) -> regions.put(testClass + "#" + tag, body));
      }
      for (String block : javaBlocks(text)) {
        String match =
            regions.entrySet().stream()
                .filter(e -> e.getValue().equals(block))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(null);
        if (match == null) {
          problems.add(
              DOCS.relativize(page)
                  + ": this snippet is not a tagged region of "
                  + classes
                  + ":\n"
                  + block);
        } else {
          unused.remove(match);
        }
      }
    }
    unused.keySet().forEach(key -> problems.add("region " + key + " is not shown by any page"));
    assertThat(problems).isEmpty();
  }

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    try (Stream<Path> files = Files.list(DOCS.resolve("primitives"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    pages.add(DOCS.resolve("backends/memory.md"));
    pages.add(DOCS.resolve("errors.md"));
    return pages;
  }

  /** The tagged regions of one example test, dedented. */
  private static Map<String, String> regions(String testClass) throws IOException {
    List<String> lines = Files.readAllLines(EXAMPLES.resolve(testClass + ".java"));
    Map<String, String> regions = new LinkedHashMap<>();
    String open = null;
    List<String> body = new ArrayList<>();
    for (String line : lines) {
      Matcher tag = TAG.matcher(line);
      Matcher end = END.matcher(line);
      if (tag.matches()) {
        open = tag.group(1);
        body.clear();
      } else if (end.matches()) {
        assertThat(end.group(1)).as("end tag in " + testClass).isEqualTo(open);
        regions.put(open, normalize(body));
        open = null;
      } else if (open != null) {
        body.add(line);
      }
    }
    assertThat(open).as("unclosed tag in " + testClass).isNull();
    return regions;
  }

  private static List<String> javaBlocks(String page) {
    List<String> blocks = new ArrayList<>();
    List<String> body = null;
    for (String line : page.split("\n", -1)) {
      if (body == null && line.strip().equals("```java")) {
        body = new ArrayList<>();
      } else if (body != null && line.strip().equals("```")) {
        blocks.add(normalize(body));
        body = null;
      } else if (body != null) {
        body.add(line);
      }
    }
    return blocks;
  }

  /** Drops blank lines at both ends and the common indentation; strips trailing spaces. */
  private static String normalize(List<String> lines) {
    int from = 0;
    int to = lines.size();
    while (from < to && lines.get(from).isBlank()) {
      from++;
    }
    while (to > from && lines.get(to - 1).isBlank()) {
      to--;
    }
    List<String> kept = lines.subList(from, to);
    int indent =
        kept.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    StringBuilder out = new StringBuilder();
    for (String line : kept) {
      out.append(line.isBlank() ? "" : line.substring(indent).stripTrailing()).append('\n');
    }
    return out.toString();
  }
}
