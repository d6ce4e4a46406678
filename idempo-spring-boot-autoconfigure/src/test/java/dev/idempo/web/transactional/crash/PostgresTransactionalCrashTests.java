package dev.idempo.web.transactional.crash;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The crash and multi-instance proofs of transactional mode on PostgreSQL, whose
 * transaction-scoped advisory lock ends with the killed instance's transaction.
 */
class PostgresTransactionalCrashTests extends TransactionalCrashTests {

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
		return "CREATE TABLE " + table + " (id BIGSERIAL PRIMARY KEY, reference VARCHAR(64) NOT NULL,"
				+ " execution VARCHAR(64) NOT NULL, instance VARCHAR(32) NOT NULL)";
	}

}
