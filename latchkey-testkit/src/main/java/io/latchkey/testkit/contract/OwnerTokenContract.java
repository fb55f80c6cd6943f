package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: explicit owner tokens: re-entry and release from other threads and clients. */
public abstract class OwnerTokenContract extends ContractSupport {}
