package dev.idempo.chaos;

/**
 * The chaos run on Redis: leases of {@link RedisChaosStore#LOCK_TTL}, and a server that
 * keeps nothing on disk, so a restart loses every record and lease (a second execution
 * after it is explained; one without a fault is not).
 *
 * @author idempo
 */
class RedisChaosIT extends ChaosRuns {

	@Override
	ChaosStore createStore() {
		return new RedisChaosStore();
	}

}
