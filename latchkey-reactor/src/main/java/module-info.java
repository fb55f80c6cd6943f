/**
 * latchkey-reactor: Project Reactor forms ({@code Mono}, {@code Flux}) of latchkey's asynchronous
 * API. Start at {@link io.latchkey.reactor.Reactive}.
 *
 * <p>reactor-core and reactive-streams are automatic modules: their jars declare stable names
 * (Automatic-Module-Name) but no module-info, hence the suppressed lints. They are transitive
 * because the API of this module returns their types.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.latchkey.reactor {
  requires transitive io.latchkey;
  requires transitive reactor.core;
  requires transitive org.reactivestreams;
  requires static org.jspecify;

  exports io.latchkey.reactor;
}
