package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/**
 * Conformance: explicit lease expiry, watchdog renewal, lease loss and its listeners, re-entry
 * never shortening a lease.
 */
public abstract class LeaseContract extends ContractSupport {}
