package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: first-come first-served order and dead waiters dropping out of the queue. */
public abstract class FairLockContract extends ContractSupport {}
