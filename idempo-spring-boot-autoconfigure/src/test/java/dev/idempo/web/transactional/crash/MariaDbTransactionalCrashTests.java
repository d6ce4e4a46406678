package dev.idempo.web.transactional.crash;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The crash and multi-instance proofs of transactional mode on MariaDB/MySQL (MariaDB
 * driver), whose {@code GET_LOCK} belongs to the session: the killed instance's lock ends
 * when the server notices that its connection is gone.
 */
class MariaDbTransactionalCrashTests extends TransactionalCrashTests {

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
		return "CREATE TABLE " + table + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, reference VARCHAR(64) NOT NULL,"
				+ " execution VARCHAR(64) NOT NULL, instance VARCHAR(32) NOT NULL) ENGINE=InnoDB";
	}

}
