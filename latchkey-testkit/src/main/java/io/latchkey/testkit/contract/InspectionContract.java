package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: inspection, listing and force release. */
public abstract class InspectionContract extends ContractSupport {}
