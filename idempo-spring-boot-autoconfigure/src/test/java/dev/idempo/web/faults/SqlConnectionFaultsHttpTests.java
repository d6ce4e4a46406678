package dev.idempo.web.faults;

import java.time.Duration;

import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestDatabases.TestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Cut and slow connections on a SQL store: the application's {@code DataSource} URL
 * points at the proxy, so the lock sessions (unpooled connections with the
 * {@code DataSource}'s settings), the schema script and the application's own pool all go
 * through it; {@code idempo.store.jdbc.timeout} is {@link #TIMEOUT}.
 * <ul>
 * <li>A claim whose connection is reset is answered 503 at once: its session is dead, and
 * a new one cannot be opened while the proxy resets.</li>
 * <li>A claim whose round trip goes unanswered (black hole, or latency above the timeout)
 * waits for the lock session's network timeout
 * ({@code idempo.store.jdbc.network-timeout}, set here to twice the timeout), and is
 * answered 503: the driver gives the session up. The claim is not tried again on a new
 * session, its caller's time being up.</li>
 * <li>A complete is bounded the same way. Its lock dies with its session, so it answers
 * that the claim was lost: the client gets the handler's response, and whether the record
 * was stored depends on whether the server received the commit, which it processes even
 * after the cut (a black hole delivers it once it heals). The key stays taken until the
 * server ends that session, never longer.</li>
 * <li>A claim the server took for a session that then died is freed with the session: as
 * soon as the server sees the connection end.</li>
 * </ul>
 *
 * @author idempo
 */
abstract class SqlConnectionFaultsHttpTests extends ConnectionFaultsHttpTests {

	static void register(DynamicPropertyRegistry registry, TestDatabase database, TcpProxy proxy, String storeType,
			String table) {
		SqlStoreProperties.register(registry, database.through(proxy), storeType, table);
		registry.add("idempo.store.jdbc.timeout", () -> TIMEOUT.toSeconds() + "s");
		registry.add("idempo.store.jdbc.network-timeout", () -> networkTimeout().toSeconds() + "s");
		// no background pings of idle sessions: a ping that holds the open session would
		// send a claim to a session still to be opened, which latency makes slow
		registry.add("idempo.store.jdbc.session-check-interval", () -> "1m");
		// the application's own pool: never waits long for a connection the proxy holds
		registry.add("spring.datasource.hikari.connection-timeout", () -> "2000");
	}

	/**
	 * The lock sessions' network timeout, set to twice the timeout (by default it is at
	 * least 10 s).
	 */
	static Duration networkTimeout() {
		return TIMEOUT.multipliedBy(2);
	}

	@Override
	Duration claimBound() {
		return networkTimeout().plus(MARGIN);
	}

	@Override
	Duration completeBound() {
		return networkTimeout().plus(MARGIN);
	}

	/**
	 * A few seconds, not a lease: the lock of a claim or complete that was cut lives as
	 * long as its session on the server, which ends it as soon as it sees the connection
	 * close (at once after a reset; after a black hole, once it heals and delivers what
	 * it held, then the close).
	 */
	@Override
	Duration leftBehindBound() {
		return MARGIN.plus(MARGIN);
	}

}
