package dev.idempo.docs;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.store.LockingStore;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's dedicated connections start an application beside Spring Boot's own
 * connections, with the settings they declare. Nothing connects: the hosts are the
 * README's examples.
 */
class DedicatedConnectionsTests {

	@Test
	void theRedisStoreStartsWithItsOwnConnectionFactoryBesideTheApplications() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class))
			.withUserConfiguration(DedicatedConnections.RedisConnection.class)
			.withPropertyValues("idempo.store.type=redis")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockingStore.class);
				LettuceConnectionFactory dedicated = context.getBean("idempotencyRedisConnectionFactory",
						LettuceConnectionFactory.class);
				assertThat(dedicated.getHostName()).isEqualTo("idempo-redis.internal");
				assertThat(context.getBean(RedisConnectionFactory.class)).as("the application's own")
					.isNotSameAs(dedicated);
			});
	}

	@Test
	void theJdbcStoreStartsWithItsOwnDataSourceBesideTheApplications() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataSourceAutoConfiguration.class, IdempotencyAutoConfiguration.class))
			.withUserConfiguration(DedicatedConnections.JdbcConnection.class)
			.withPropertyValues("idempo.store.type=postgres", "idempo.store.jdbc.initialize-schema=never",
					"spring.datasource.url=jdbc:postgresql://app-db.internal:5432/shop")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockingStore.class);
				DataSource dedicated = context.getBean("idempotencyDataSource", DataSource.class);
				assertThat(dedicated).isInstanceOf(SimpleDriverDataSource.class);
				assertThat(((SimpleDriverDataSource) dedicated).getUrl()).startsWith("jdbc:postgresql://db:5432/shop");
				assertThat(context.getBean(DataSource.class)).as("the application's own").isNotSameAs(dedicated);
			});
	}

}
