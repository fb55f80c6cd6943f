package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/**
 * Conformance: read-write rules: shared readers, exclusive writer, writer may read, upgrade
 * refused.
 */
public abstract class ReadWriteLockContract extends ContractSupport {}
