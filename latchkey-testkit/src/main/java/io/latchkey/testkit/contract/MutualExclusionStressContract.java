package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: many threads doing an unsynchronised read-modify-write under the lock. */
public abstract class MutualExclusionStressContract extends ContractSupport {}
