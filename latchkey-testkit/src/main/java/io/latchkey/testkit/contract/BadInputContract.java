package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: invalid arguments are refused with clear messages. */
public abstract class BadInputContract extends ContractSupport {}
