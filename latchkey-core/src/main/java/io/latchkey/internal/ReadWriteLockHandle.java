package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.OwnerToken;
import io.latchkey.Primitive;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** Both sides of a read-write lock over one lock record. */
final class ReadWriteLockHandle implements DistributedReadWriteLock {
  private final LatchkeyClient client;
  private final String name;
  private final LockHandle readLock;
  private final LockHandle writeLock;

  ReadWriteLockHandle(LatchkeyClient client, String name, @Nullable String owner) {
    this.client = client;
    this.name = name;
    this.readLock = new LockHandle(client, name, Primitive.READ_LOCK, owner);
    this.writeLock = new LockHandle(client, name, Primitive.WRITE_LOCK, owner);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public DistributedLock readLock() {
    return readLock;
  }

  @Override
  public DistributedLock writeLock() {
    return writeLock;
  }

  @Override
  public DistributedReadWriteLock withOwner(OwnerToken owner) {
    Objects.requireNonNull(owner, "owner must not be null");
    return new ReadWriteLockHandle(client, name, owner.value());
  }
}
