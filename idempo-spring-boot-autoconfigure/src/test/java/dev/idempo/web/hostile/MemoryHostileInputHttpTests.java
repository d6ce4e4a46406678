package dev.idempo.web.hostile;

import org.junit.jupiter.api.Test;

import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile keys and bodies on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryHostileInputHttpTests extends HostileInputHttpTests {

	@Override
	protected long storedRecords() {
		return ((InMemoryLockingStore) this.store).size();
	}

	@Test
	void runsOnTheMemoryStore() {
		assertThat(this.store).isInstanceOf(InMemoryLockingStore.class);
	}

}
