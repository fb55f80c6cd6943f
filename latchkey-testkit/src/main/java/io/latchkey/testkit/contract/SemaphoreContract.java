package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: counting semaphore accounting. */
public abstract class SemaphoreContract extends ContractSupport {}
