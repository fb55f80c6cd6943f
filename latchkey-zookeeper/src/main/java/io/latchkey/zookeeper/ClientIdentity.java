package io.latchkey.zookeeper;

/**
 * Who writes a node: this client's id and the host and process it runs in.
 *
 * @param clientId the engine's client id
 * @param host this machine's host name
 * @param pid this process's id
 */
record ClientIdentity(String clientId, String host, long pid) {}
