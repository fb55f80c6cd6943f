package io.latchkey.spi;

import io.latchkey.Feature;
import io.latchkey.UnsupportedFeatureException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The answer of an SPI method that a backend does not implement: the default methods added to the
 * stores after their first edition refuse with it, so that a backend written before them keeps
 * compiling and refuses cleanly (the engine asks only for what a backend declares, so a backend
 * meets this only when it is called directly).
 */
final class Refusals {
  private Refusals() {}

  static <T> CompletionStage<T> refuse(Feature feature, Object store) {
    return CompletableFuture.failedFuture(
        new UnsupportedFeatureException(feature, store.getClass().getName()));
  }
}
