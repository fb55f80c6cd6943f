package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: leased semaphore accounting and permit expiry. */
public abstract class LeasedSemaphoreContract extends ContractSupport {}
