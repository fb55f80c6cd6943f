package io.latchkey.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The shop's stock of the flash sale: a number that buyers read and write back, deliberately with
 * no synchronisation of its own beyond visibility, so that only the guard of the sale keeps it
 * right.
 */
interface Stock {
  /**
   * @return the items left
   */
  int read();

  /**
   * @param left the items left after a purchase
   */
  void write(int left);

  /**
   * @param items the initial stock
   * @return a stock in this process's memory, for buyer threads of one JVM
   */
  static Stock inMemory(int items) {
    return new InMemory(items);
  }

  /**
   * Writes a stock file for buyers in several processes.
   *
   * @param file the file to create or overwrite
   * @param items the initial stock
   */
  static void create(Path file, int items) {
    ByteBuffer bytes = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.nativeOrder());
    bytes.putInt(0, items);
    try {
      Files.write(file, bytes.array());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the stock file " + file, e);
    }
  }

  /**
   * Maps a stock file into memory: every process that maps it shares the same four bytes, read and
   * written with plain volatile loads and stores, never an atomic read-modify-write.
   *
   * @param file a file made by {@link #create}
   * @return the shared stock
   */
  static Stock mapped(Path file) {
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return new Mapped(channel.map(FileChannel.MapMode.READ_WRITE, 0, Integer.BYTES));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot map the stock file " + file, e);
    }
  }

  /** The stock of one JVM. */
  final class InMemory implements Stock {
    private volatile int left;

    private InMemory(int left) {
      this.left = left;
    }

    @Override
    public int read() {
      return left;
    }

    @Override
    public void write(int value) {
      left = value;
    }
  }

  /** The stock shared by processes through a memory-mapped file. */
  final class Mapped implements Stock {
    private static final VarHandle INT =
        MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final MappedByteBuffer buffer;

    private Mapped(MappedByteBuffer buffer) {
      this.buffer = buffer;
    }

    @Override
    public int read() {
      return (int) INT.getVolatile(buffer, 0);
    }

    @Override
    public void write(int value) {
      INT.setVolatile(buffer, 0, value);
    }
  }
}
