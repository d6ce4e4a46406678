package dev.idempo.store.jdbc;

import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.jdbc.SqlPipeline.Sql;
import dev.idempo.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link LockSessionPool} on a real PostgreSQL server: a fixed number of
 * sessions, a new generation for every connection, a dead connection discarded and
 * replaced, and no connection once closed or to the wrong database.
 *
 * @author idempo
 */
class LockSessionPoolTests {

	private final ExecutorService networkTimeouts = Executors.newSingleThreadExecutor();

	private final JdbcStoreSettings settings = JdbcStoreSettings.defaults().withLockSessions(3);

	private LockSessionPool pool;

	@AfterEach
	void discardAll() {
		if (this.pool != null) {
			for (LockSession session : this.pool.sessions()) {
				if (session.tryRun()) {
					try {
						this.pool.discard(session);
					}
					finally {
						session.endRun();
					}
				}
			}
		}
		this.networkTimeouts.shutdownNow();
	}

	private LockSessionPool pool(TestDatabases.TestDatabase database) {
		this.pool = new LockSessionPool(database.dataSource(),
				new PostgresDialect(this.settings.tableName(), JdbcLockingStore.DEFAULT_LOCK_NAMESPACE), this.settings,
				this.networkTimeouts);
		return this.pool;
	}

	@Test
	void hasAFixedNumberOfSessionsEachOpenedOnDemandWithAGenerationOfItsOwn() {
		LockSessionPool pool = pool(TestDatabases.postgres());
		assertThat(pool.sessions()).hasSize(3);
		Set<Long> generations = new HashSet<>();
		for (int i = 0; i < 3; i++) {
			LockSession session = pool.get(i);
			assertThat(session.index()).isEqualTo(i);
			assertThat(session.isOpen()).isFalse();
			assertThat(session.generation()).isZero();
			assertThat(session.tryRun()).isTrue();
			try {
				assertThat(pool.openIfNeeded(session)).isTrue();
				assertThat(pool.openIfNeeded(session)).isFalse();
				generations.add(session.generation());
			}
			finally {
				session.endRun();
			}
		}
		assertThat(generations).hasSize(3).doesNotContain(0L);
	}

	@Test
	void aDeadConnectionIsDiscardedAndReplacedByOneWithANewGeneration() throws SQLException {
		LockSessionPool pool = pool(TestDatabases.postgres());
		LockSession session = pool.get(0);
		assertThat(session.tryRun()).isTrue();
		try {
			pool.openIfNeeded(session);
			long first = session.generation();
			long pid = session.info().connectionId();
			assertThat(TestDatabases.postgres()
				.jdbc()
				.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, (int) pid)).isTrue();
			Throwable failure = null;
			try {
				SqlPipeline.run(session.connection(), false, 5, List.of(new Sql("SELECT 1")));
			}
			catch (SQLException ex) {
				failure = ex;
			}
			assertThat(failure).as("a statement on the terminated session").isNotNull();
			assertThat(session.isDead(failure)).isTrue();
			assertThat(pool.discard(session)).isEqualTo(first);
			assertThat(session.isOpen()).isFalse();
			assertThat(pool.openIfNeeded(session)).isTrue();
			assertThat(session.generation()).isGreaterThan(first);
			assertThat(session.info().connectionId()).isNotEqualTo(pid);
			assertThat(session.isDead(null)).isFalse();
		}
		finally {
			session.endRun();
		}
	}

	@Test
	void opensNothingOnceClosed() {
		LockSessionPool pool = pool(TestDatabases.postgres());
		pool.close();
		LockSession session = pool.get(0);
		assertThat(session.tryRun()).isTrue();
		try {
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> pool.openIfNeeded(session))
				.withMessageContaining("closed");
			assertThat(session.isOpen()).isFalse();
		}
		finally {
			session.endRun();
		}
	}

	@Test
	void refusesAConnectionToAnotherKindOfDatabase() {
		LockSessionPool pool = pool(TestDatabases.mysql());
		LockSession session = pool.get(0);
		assertThat(session.tryRun()).isTrue();
		try {
			assertThatExceptionOfType(LockingStoreException.class).isThrownBy(() -> pool.openIfNeeded(session))
				.havingCause()
				.withMessageContaining("needs PostgreSQL");
			assertThat(session.isOpen()).isFalse();
			assertThat(session.generation()).isZero();
		}
		finally {
			session.endRun();
		}
	}

}
