package dev.idempo.kafka;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kafka listener proofs with the PostgreSQL store and business table, and the control
 * run without the annotation (the same for every store, so here only).
 */
class PostgresKafkaListenerTests extends KafkaListenerTests {

	@Override
	TestDatabase database() {
		return TestDatabases.postgres();
	}

	@Override
	String storeType() {
		return "postgres";
	}

	@Override
	String schemaPlatform() {
		return "postgresql";
	}

	@Override
	String businessTableDdl(String table) {
		return "CREATE TABLE " + table + " (id BIGSERIAL PRIMARY KEY, payment_id VARCHAR(64) NOT NULL,"
				+ " payload VARCHAR(256) NOT NULL, instance VARCHAR(32) NOT NULL)";
	}

	@Test
	@Timeout(300)
	void withoutTheAnnotationTheSameRunLeavesARowPerDelivery() throws Exception {
		Run run = run("plain");
		assertThat(run.rows()).as("rows per payment").hasSize(PAYMENTS).allSatisfy((payment, instances) -> {
			assertThat(instances).as("rows of %s", payment).hasSizeGreaterThan(1);
		});
		assertThat(run.executionsOnB()).as("listener bodies run on B").isPositive();
		assertThat(run.rows().get(KILLED_AFTER)).as("rows of the payment A was killed after").contains("a#1", "b#1");
	}

}
