package dev.idempo.web.failover;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failover with the defaults (no replica acknowledgements): a stored response is sent
 * as soon as the primary has it, so records not yet replicated when the primary dies are
 * lost, and their retries run the handler again. The test counts them and checks that
 * nothing worse happens; it does not require a loss (the window is timing), and a loss is
 * never of a record the replica had acknowledged, because nothing waits for that here.
 *
 * @author idempo
 */
class RedisFailoverHttpTests extends AbstractRedisFailoverHttpTests {

	@Override
	int replicaAcknowledgements() {
		return 0;
	}

	@Override
	void assertLostRecords(Run run) {
		assertThat(run.acknowledged()).isZero();
		assertThat(run.unacknowledged()).isZero();
		assertThat(run.lost()).isLessThanOrEqualTo(run.completed());
	}

}
