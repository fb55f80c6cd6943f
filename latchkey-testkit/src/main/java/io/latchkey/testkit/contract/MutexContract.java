package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: the non-reentrant mutex. */
public abstract class MutexContract extends ContractSupport {}
