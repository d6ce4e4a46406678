package dev.idempo.web.outage;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The PostgreSQL store starts during a database outage.
 */
class PostgresStartsDuringOutageTests extends SqlStoreStartsDuringOutageTests {

	@Override
	TestDatabase database() {
		return TestDatabases.postgres();
	}

	@Override
	String storeType() {
		return "postgres";
	}

}
