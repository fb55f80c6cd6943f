package io.latchkey.jdbc;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code jdbc:} URI given to {@link io.latchkey.Latchkey#connect}, taken apart: the latchkey
 * options ({@code latchkey.*} parameters, after {@code ?}/{@code &} or {@code ;}) are removed, user
 * and password in the authority ({@code //user:password@host}) move to connection properties, and
 * what remains goes to the driver.
 */
final class JdbcUrl {
  private static final Pattern OPTION = Pattern.compile("([?&;])latchkey\\.([A-Za-z]+)=([^&;]*)");
  private static final Pattern USER_INFO = Pattern.compile("^(jdbc:[a-z0-9]+://)([^/@?;]*)@");

  final String driverUrl;
  final Properties properties = new Properties();
  final Map<String, String> options = new LinkedHashMap<>();

  JdbcUrl(String uri) {
    StringBuilder rest = new StringBuilder();
    Matcher option = OPTION.matcher(uri);
    int last = 0;
    while (option.find()) {
      options.put(option.group(2), URLDecoder.decode(option.group(3), StandardCharsets.UTF_8));
      rest.append(uri, last, option.start());
      // Keep the separator for the parameter that follows, if any.
      if (!option.group(1).equals("&")) {
        rest.append(option.group(1));
      }
      last = option.end();
    }
    rest.append(uri.substring(last));
    String url = rest.toString().replace("?&", "?").replace(";;", ";");
    if (url.endsWith("?") || url.endsWith(";")) {
      url = url.substring(0, url.length() - 1);
    }
    Matcher userInfo = USER_INFO.matcher(url.toLowerCase(Locale.ROOT));
    if (userInfo.find()) {
      String raw = url.substring(userInfo.start(2), userInfo.end(2));
      int colon = raw.indexOf(':');
      String user = colon < 0 ? raw : raw.substring(0, colon);
      properties.setProperty("user", URLDecoder.decode(user, StandardCharsets.UTF_8));
      if (colon >= 0) {
        properties.setProperty(
            "password", URLDecoder.decode(raw.substring(colon + 1), StandardCharsets.UTF_8));
      }
      url = url.substring(0, userInfo.start(2)) + url.substring(userInfo.end(2) + 1);
    }
    this.driverUrl = url;
  }

  /**
   * @param url a JDBC URL
   * @return the URL without user info and without parameters (which may carry a password)
   */
  static String redacted(String url) {
    String withoutUser = USER_INFO.matcher(url).replaceFirst("$1");
    int cut = withoutUser.length();
    for (char separator : new char[] {'?', ';'}) {
      int at = withoutUser.indexOf(separator);
      if (at >= 0) {
        cut = Math.min(cut, at);
      }
    }
    return withoutUser.substring(0, cut);
  }
}
