package dev.idempo.web.failover;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failover with {@code idempo.store.redis.replica-acknowledgements=1}: every stored
 * response waits until the one replica has the record (Redis {@code WAIT}) before it is
 * sent. The replica is the one promoted, so no record it acknowledged is lost: every key
 * whose retry after the failover ran the handler again is accounted for by a complete
 * that was not acknowledged in time, or whose storing failed or found its claim gone
 * (each counted by the application).
 *
 * @author idempo
 */
class RedisFailoverReplicaAcknowledgementHttpTests extends AbstractRedisFailoverHttpTests {

	@Override
	int replicaAcknowledgements() {
		return 1;
	}

	@Override
	void assertLostRecords(Run run) {
		assertThat(run.acknowledged()).isPositive();
		assertThat((long) run.lost()).as("records lost, beyond those never acknowledged by the replica")
			.isLessThanOrEqualTo(run.unacknowledged() + run.storeErrors() + run.lockLost());
	}

}
