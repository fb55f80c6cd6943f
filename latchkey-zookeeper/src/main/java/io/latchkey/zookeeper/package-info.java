/**
 * The ZooKeeper backend of latchkey: every primitive on ephemeral (sequential) nodes whose lives
 * are the client's session, over the Apache Curator framework. Add this module to the class path
 * and connect with a {@code zookeeper://} URI; see {@link
 * io.latchkey.zookeeper.ZooKeeperBackendProvider} for the URI form and options and {@link
 * io.latchkey.zookeeper.ZooKeeperBackend} for the node layout and how sessions become lease events.
 */
@NullMarked
package io.latchkey.zookeeper;

import org.jspecify.annotations.NullMarked;
