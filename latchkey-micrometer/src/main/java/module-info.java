/**
 * latchkey-micrometer: a {@link io.latchkey.LatchkeyObserver} that records Micrometer meters and,
 * optionally, observations of a latchkey client.
 *
 * <p>Micrometer's jars are automatic modules (declared names {@code micrometer.core} and {@code
 * micrometer.observation}), hence the suppressed lint; its types are part of this module's API.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.latchkey.micrometer {
  requires transitive io.latchkey;
  requires transitive micrometer.core;
  requires transitive micrometer.observation;
  requires static org.jspecify;

  exports io.latchkey.micrometer;
}
