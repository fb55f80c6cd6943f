package io.latchkey.internal;

import java.io.IOException;
import java.net.InetAddress;

/** The name of this machine, as presence records give it. */
final class LocalHost {
  static final String NAME = hostName();

  private LocalHost() {}

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }
}
