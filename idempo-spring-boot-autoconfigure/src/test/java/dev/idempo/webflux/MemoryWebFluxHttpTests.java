package dev.idempo.webflux;

import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.test.context.TestPropertySource;

/**
 * The WebFlux HTTP contract on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryWebFluxHttpTests extends WebFluxHttpContractTests {

	@Override
	Class<?> storeType() {
		return InMemoryLockingStore.class;
	}

}
