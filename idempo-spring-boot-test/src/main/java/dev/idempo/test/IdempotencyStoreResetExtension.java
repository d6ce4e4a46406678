package dev.idempo.test;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.idempo.store.memory.InMemoryLockingStore;

import org.springframework.context.ApplicationContext;
import org.springframework.test.context.junit.jupiter.SpringExtension;

/**
 * Empties every in-memory idempotency store of the test's application context before each
 * test, so that tests sharing a cached context can reuse keys without replaying each
 * other's responses.
 *
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;ExtendWith(IdempotencyStoreResetExtension.class)
 * class PaymentsTests { ... }
 * </pre>
 *
 * @author idempo
 */
public class IdempotencyStoreResetExtension implements BeforeEachCallback {

	@Override
	public void beforeEach(ExtensionContext context) {
		ApplicationContext applicationContext = SpringExtension.getApplicationContext(context);
		applicationContext.getBeansOfType(InMemoryLockingStore.class).values().forEach(InMemoryLockingStore::clear);
	}

}
