package io.latchkey.testkit;

import io.latchkey.Lease;
import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what a lease's listeners hear, for tests of suspension, resumption and loss. */
public final class LeaseTransitions {
  private LeaseTransitions() {}

  /**
   * @param lease the lease to listen to
   * @return a live, thread-safe list of what its listeners hear from now on, in order: {@code
   *     "suspended"}, {@code "resumed"}, {@code "lost"}
   */
  public static List<String> of(Lease lease) {
    List<String> heard = new CopyOnWriteArrayList<>();
    lease.addListener(
        new LeaseListener() {
          @Override
          public void suspended(String reason) {
            heard.add("suspended");
          }

          @Override
          public void resumed() {
            heard.add("resumed");
          }

          @Override
          public void lost(LeaseLostException reason) {
            heard.add("lost");
          }
        });
    return heard;
  }
}
