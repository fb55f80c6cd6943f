package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: fencing tokens grow with every grant of a name. */
public abstract class FencingContract extends ContractSupport {}
