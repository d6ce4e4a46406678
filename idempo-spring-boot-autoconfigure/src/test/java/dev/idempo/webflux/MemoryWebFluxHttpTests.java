package dev.idempo.webflux;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import dev.idempo.store.InlineLockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;
import dev.idempo.web.TestHttp;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux HTTP contract on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryWebFluxHttpTests extends WebFluxHttpContractTests {

	@Override
	Class<?> reactiveStoreType() {
		return InlineLockingStore.class;
	}

	@Override
	Class<?> storeType() {
		return InMemoryLockingStore.class;
	}

	/**
	 * BlockHound watches the server's event loops too, where handlers and idempo's filter
	 * run: a handler that blocks there fails.
	 */
	@Test
	void blockingOnAnEventLoopFails() {
		HttpResponse<byte[]> response = this.http.post("/t/blocking", "{}");
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(TestHttp.text(response)).doesNotContain("blocked an event loop");
	}

}
