package dev.idempo.web;

import java.net.http.HttpResponse;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.testsupport.MutableClock;
import dev.idempo.web.testapp.Executions;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Opt-in fail-open: a store outage runs the handler unprotected, counted.
 *
 * @author idempo
 */
@SpringBootTest(classes = { HttpTestApplication.class, FailOpenHttpTests.StoreConfiguration.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempo.store-failure.mode=fail-open")
class FailOpenHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	Executions executions;

	@Autowired
	SwitchableStore store;

	@Autowired
	MeterRegistry meterRegistry;

	@Test
	void storeOutageRunsTheHandlerUnprotected() {
		TestHttp http = new TestHttp(this.port);
		String key = TestHttp.newKey();
		int before = this.executions.count("object");
		this.store.setDown(true);
		HttpResponse<byte[]> first = http.postWithKey("/t/object", key, "{}");
		HttpResponse<byte[]> second = http.postWithKey("/t/object", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(this.executions.count("object")).isEqualTo(before + 2);
		assertThat(this.meterRegistry.get("idempo.requests").tag("outcome", "unprotected").counter().count())
			.isEqualTo(2);
		this.store.setDown(false);
		http.postWithKey("/t/object", key, "{}");
		assertThat(http.postWithKey("/t/object", key, "{}").headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class StoreConfiguration {

		@Bean
		SwitchableStore idempotencyLockingStore() {
			return new SwitchableStore(new InMemoryLockingStore(new MutableClock(), 100, 1024 * 1024));
		}

	}

}
