package io.latchkey.cli;

/** What protects the stock in one run of the flash sale. */
enum SaleGuard {
  /** Nothing: the unsynchronised read-modify-write oversells. */
  NONE("no lock", ""),
  /** A reentrant lock around the read-modify-write. */
  LOCK("reentrant lock", "latchkey-demo/flash-sale/lock"),
  /** A fair lock (first come, first served) around it. */
  FAIR_LOCK("fair lock", "latchkey-demo/flash-sale/fair-lock"),
  /** A semaphore whose permits are the items: a buyer with a permit has an item, no lock needed. */
  SEMAPHORE("semaphore checkout", "latchkey-demo/flash-sale/checkout");

  private final String label;
  private final String resource;

  SaleGuard(String label, String resource) {
    this.label = label;
    this.resource = resource;
  }

  /**
   * @return the name of the run in the results table
   */
  String label() {
    return label;
  }

  /**
   * @return the name of the lock or semaphore on the backend (fixed, so that repeated demos leave
   *     nothing new behind)
   */
  String resource() {
    return resource;
  }
}
