package dev.idempo.kafka;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/** The Kafka listener proofs with the MySQL/MariaDB store and business table. */
class MariaDbKafkaListenerTests extends KafkaListenerTests {

	@Override
	TestDatabase database() {
		return TestDatabases.mysql();
	}

	@Override
	String storeType() {
		return "mysql";
	}

	@Override
	String schemaPlatform() {
		return "mysql";
	}

	@Override
	String businessTableDdl(String table) {
		return "CREATE TABLE " + table + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, payment_id VARCHAR(64) NOT NULL,"
				+ " payload VARCHAR(256) NOT NULL, instance VARCHAR(32) NOT NULL) ENGINE=InnoDB";
	}

}
