package dev.idempo.store.jdbc;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract and the SQL store tests on MySQL or MariaDB with batching off: every
 * operation runs alone, one statement per round trip.
 *
 * @author idempo
 */
class MySqlPlainLockingStoreTests extends MySqlLockingStoreTests {

	@Override
	JdbcLockingStore newStore(DataSource dataSource, JdbcStoreSettings settings) {
		return super.newStore(dataSource, settings.withBatching(false));
	}

	@Test
	void runsEveryOperationAlone() {
		assertThat(((JdbcLockingStore) store()).settings().batching()).isFalse();
	}

}
