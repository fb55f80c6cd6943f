package io.latchkey.spring;

import io.latchkey.redis.RedisBackend;
import io.latchkey.spi.BackendFactory;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConverters;

/**
 * The application's Spring Data Redis {@link LettuceConnectionFactory}: the Redis backend over the
 * Lettuce client it made ({@link LettuceConnectionFactory#getRequiredNativeClient()}), through
 * {@link RedisBackend#builder}. Lettuce's clients do not tell where they connect, so the URI comes
 * from the factory's configuration: its server, sentinels or cluster nodes, credentials, database,
 * TLS settings and client name. latchkey opens its own connections on the client's resources (see
 * {@link RedisBackend#builder(RedisClient, RedisURI)} for why it cannot use the client's own).
 *
 * <p>Not reused: a factory on a Unix socket or a static master/replica set-up (it is read as the
 * standalone server of its configuration), and credentials that come from a {@code
 * RedisCredentialsProviderFactory}; set {@code latchkey.url} for those.
 */
final class LettuceReuse extends ReusableClient<LettuceConnectionFactory> {
  LettuceReuse(ConfigurableListableBeanFactory beans) {
    super(
        beans,
        LettuceConnectionFactory.class,
        LatchkeyProperties.Reuse.REDIS,
        "a LettuceConnectionFactory bean (Spring Data Redis, with latchkey-redis)");
  }

  @Override
  BackendFactory backend(
      LettuceConnectionFactory factory, String name, LatchkeyProperties properties) {
    if (factory.getSocketConfiguration() != null) {
      throw new IllegalStateException(
          "latchkey cannot reuse the LettuceConnectionFactory '"
              + name
              + "': it connects through a Unix socket; set latchkey.url, or latchkey.reuse=none");
    }
    AbstractRedisClient client = factory.getRequiredNativeClient();
    LettuceClientConfiguration settings = factory.getClientConfiguration();
    RedisBackend.Builder builder;
    if (client instanceof RedisClusterClient cluster) {
      RedisClusterConfiguration configuration = factory.getClusterConfiguration();
      if (configuration == null) {
        throw new IllegalStateException(
            "the LettuceConnectionFactory '"
                + name
                + "' has a cluster client but no cluster nodes");
      }
      List<RedisURI> seeds = new ArrayList<>();
      for (RedisNode node : configuration.getClusterNodes()) {
        RedisURI seed = RedisURI.create(node.getRequiredHost(), node.getRequiredPort());
        authenticate(seed, configuration.getUsername(), configuration.getPassword());
        seeds.add(withClientSettings(seed, settings));
      }
      builder = RedisBackend.builder(cluster, seeds);
    } else if (client instanceof RedisClient redis) {
      RedisURI uri;
      if (factory.isRedisSentinelAware()) {
        RedisSentinelConfiguration sentinels = factory.getSentinelConfiguration();
        if (sentinels == null) {
          throw new IllegalStateException(
              "the LettuceConnectionFactory '" + name + "' is sentinel-aware but has no sentinels");
        }
        uri = LettuceConverters.sentinelConfigurationToRedisURI(sentinels);
      } else {
        RedisStandaloneConfiguration server = factory.getStandaloneConfiguration();
        uri = RedisURI.create(server.getHostName(), server.getPort());
        uri.setDatabase(server.getDatabase());
        authenticate(uri, server.getUsername(), server.getPassword());
      }
      builder = RedisBackend.builder(redis, withClientSettings(uri, settings));
    } else {
      throw new IllegalStateException(
          "latchkey cannot reuse the LettuceConnectionFactory '"
              + name
              + "': its client is a "
              + client.getClass().getName());
    }
    LatchkeyProperties.set("latchkey.key-prefix", properties.getKeyPrefix(), builder::keyPrefix);
    return builder.build();
  }

  private static void authenticate(
      RedisURI uri, @Nullable String username, @Nullable RedisPassword password) {
    if (password == null || !password.isPresent()) {
      return;
    }
    if (username == null || username.isEmpty()) {
      uri.setAuthentication(password.get());
    } else {
      uri.setAuthentication(username, password.get());
    }
  }

  /** The settings of the factory's client configuration that a URI carries. */
  private static RedisURI withClientSettings(RedisURI uri, LettuceClientConfiguration settings) {
    if (settings.isUseSsl()) {
      uri.setSsl(true);
      uri.setVerifyPeer(settings.getVerifyMode());
      uri.setStartTls(settings.isStartTls());
    }
    settings.getClientName().ifPresent(uri::setClientName);
    return uri;
  }
}
