package dev.idempo.web.outage;

import dev.idempo.testsupport.TestDatabases;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

/**
 * The MySQL/MariaDB store starts during a database outage.
 */
class MariaDbStartsDuringOutageTests extends SqlStoreStartsDuringOutageTests {

	@Override
	TestDatabase database() {
		return TestDatabases.mysql();
	}

	@Override
	String storeType() {
		return "mysql";
	}

}
