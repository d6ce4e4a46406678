package dev.idempo.kafka;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/** The Kafka listener proofs with the PostgreSQL store and business table. */
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

}
