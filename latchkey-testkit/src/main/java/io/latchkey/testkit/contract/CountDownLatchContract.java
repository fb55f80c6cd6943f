package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: count-down latches. */
public abstract class CountDownLatchContract extends ContractSupport {}
