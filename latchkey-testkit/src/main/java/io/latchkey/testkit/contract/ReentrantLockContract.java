package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/**
 * Conformance: mutual exclusion, reentrancy and hold counts, owner-only unlock, the Lock methods.
 */
public abstract class ReentrantLockContract extends ContractSupport {}
