package dev.idempo.store.redis;

import java.time.Duration;

import dev.idempo.store.LockingStore;

/**
 * The whole store contract with replica acknowledgements on, against the standalone test
 * server, which has fewer replicas than required: every complete takes the pipelined
 * {@code WAIT} path and waits its (short) timeout, and the store behaves exactly as
 * without it.
 *
 * @author idempo
 */
class RedisReplicaAcknowledgementLockingStoreTests extends RedisLockingStoreTests {

	@Override
	protected LockingStore createStore() {
		return ((RedisLockingStore) super.createStore()).withReplicaAcknowledgements(1000, Duration.ofMillis(5));
	}

}
