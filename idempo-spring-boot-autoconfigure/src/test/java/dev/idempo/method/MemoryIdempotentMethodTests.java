package dev.idempo.method;

import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStore;
import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The method contract on the in-memory store.
 *
 * @author idempo
 */
class MemoryIdempotentMethodTests extends IdempotentMethodContractTests {

	@Test
	void runsOnTheMemoryStore(@Autowired LockingStore store) {
		assertThat(store).isInstanceOf(InMemoryLockingStore.class);
	}

}
