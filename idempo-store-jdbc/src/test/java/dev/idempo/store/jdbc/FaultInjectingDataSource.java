package dev.idempo.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Real connections to a real server, except that the statements a test picks fail when
 * they are prepared, as a statement timeout or a driver bug would make them fail.
 *
 * @author idempo
 */
class FaultInjectingDataSource extends DelegatingDataSource {

	private volatile @Nullable Predicate<String> failing;

	private volatile Supplier<? extends Throwable> fault = () -> new SQLException("injected");

	private volatile BiConsumer<Connection, String> onPrepare = (connection, sql) -> {
	};

	FaultInjectingDataSource(DataSource dataSource) {
		super(dataSource);
	}

	/**
	 * Makes the statements whose SQL matches {@code which} throw what {@code fault}
	 * supplies, until {@link #heal()}.
	 * @param which which statements fail
	 * @param fault what they throw: an SQLException or a runtime exception
	 */
	void fail(Predicate<String> which, Supplier<? extends Throwable> fault) {
		this.fault = fault;
		this.failing = which;
	}

	void heal() {
		this.failing = null;
	}

	/**
	 * Sees every statement as it is prepared, before any fault.
	 * @param onPrepare what to do with the connection and the SQL
	 */
	void onPrepare(BiConsumer<Connection, String> onPrepare) {
		this.onPrepare = onPrepare;
	}

	@Override
	public Connection getConnection() throws SQLException {
		return wrap(super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return wrap(super.getConnection(username, password));
	}

	private Connection wrap(Connection connection) {
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, arguments) -> {
					if (method.getName().equals("prepareStatement") && arguments != null
							&& arguments[0] instanceof String sql) {
						this.onPrepare.accept(connection, sql);
						Predicate<String> failing = this.failing;
						if (failing != null && failing.test(sql)) {
							throw this.fault.get();
						}
					}
					try {
						return method.invoke(connection, arguments);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	static boolean isUnlock(String sql) {
		return sql.contains("pg_advisory_unlock(") || sql.contains("RELEASE_LOCK(");
	}

	static boolean isStore(String sql) {
		return sql.contains("INSERT INTO") || sql.contains("REPLACE INTO");
	}

}
