/**
 * latchkey-redis: the Redis backend (standalone, Sentinel, Cluster) on Lettuce, found by {@link
 * java.util.ServiceLoader} as the provider of the {@code redis://}, {@code rediss://}, {@code
 * redis-sentinel://} and {@code redis-cluster://} schemes (and their TLS forms).
 *
 * <p>Lettuce is an automatic module: its jar declares the stable name {@code lettuce.core}
 * (Automatic-Module-Name) but no module-info, hence the suppressed requires-automatic lints. It is
 * required transitively: {@code RedisBackend.builder} takes an application's Lettuce client.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.latchkey.redis {
  // RedisBackend implements SPI types of core, so readers of this module read core too.
  requires transitive io.latchkey;
  requires transitive lettuce.core;
  requires org.slf4j;
  requires static org.jspecify;

  exports io.latchkey.redis;

  provides io.latchkey.spi.BackendProvider with
      io.latchkey.redis.RedisBackendProvider;
}
