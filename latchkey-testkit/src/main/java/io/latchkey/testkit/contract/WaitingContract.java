package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: timeouts, interrupts, wake-ups and the async forms. */
public abstract class WaitingContract extends ContractSupport {}
