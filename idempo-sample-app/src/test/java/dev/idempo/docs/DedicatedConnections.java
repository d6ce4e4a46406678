package dev.idempo.docs;

import javax.sql.DataSource;

import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The stores' own connections, as the README declares them.
 */
final class DedicatedConnections {

	private DedicatedConnections() {
	}

	@Configuration(proxyBeanMethods = false)
	static class RedisConnection {

		// tag::redis-connection-factory[]
		@Bean(defaultCandidate = false)
		LettuceConnectionFactory idempotencyRedisConnectionFactory() {
			return new LettuceConnectionFactory(new RedisStandaloneConfiguration("idempo-redis.internal", 6379));
		}
		// end::redis-connection-factory[]

	}

	@Configuration(proxyBeanMethods = false)
	static class JdbcConnection {

		// tag::jdbc-data-source[]
		@Bean(defaultCandidate = false)
		DataSource idempotencyDataSource() {
			return DataSourceBuilder.create()
				.type(SimpleDriverDataSource.class)
				.url("jdbc:postgresql://db:5432/shop?connectTimeout=5&loginTimeout=5")
				.username("idempo")
				.password("…")
				.build();
		}
		// end::jdbc-data-source[]

	}

}
