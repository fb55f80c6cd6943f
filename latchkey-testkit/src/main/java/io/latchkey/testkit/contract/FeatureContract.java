package io.latchkey.testkit.contract;

import io.latchkey.testkit.ContractSupport;

/** Conformance: declared features match the backend, missing ones refuse cleanly. */
public abstract class FeatureContract extends ContractSupport {}
