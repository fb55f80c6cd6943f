package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: multi-lock all-or-none and deadlock-free ordering. */
public abstract class MultiLockContract extends ContractSupport {}
