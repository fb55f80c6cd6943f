package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: worker JVMs contending, and a SIGKILLed holder whose lock frees after its lease. */
public abstract class MultiProcessContract extends ContractSupport {}
