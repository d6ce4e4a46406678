package dev.idempo.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Real connections to a real server that record every round trip the store makes through
 * JDBC: each executed SQL text (a pipelined batch is one text whose statements are joined
 * by {@code ";\n"}), and each connection call that may reach the server (auto-commit,
 * commit, rollback, isolation, validation).
 *
 * @author idempo
 */
class StatementRecordingDataSource extends DelegatingDataSource {

	/** Connection calls that may send something to the server. */
	private static final Set<String> CALLS = Set.of("setAutoCommit", "commit", "rollback", "setTransactionIsolation",
			"isValid", "setReadOnly", "setCatalog", "setSchema", "createStatement", "prepareCall", "releaseSavepoint",
			"setSavepoint");

	private final List<String> events = new CopyOnWriteArrayList<>();

	StatementRecordingDataSource(DataSource dataSource) {
		super(dataSource);
	}

	/** Forgets what was recorded. */
	void clear() {
		this.events.clear();
	}

	/**
	 * What was recorded, in order: an executed SQL text, or {@code call:} and a
	 * connection method's name.
	 * @return the events
	 */
	List<String> events() {
		return new ArrayList<>(this.events);
	}

	/**
	 * The statements recorded, one per element (pipelined texts split).
	 * @return the statements
	 */
	List<String> statements() {
		List<String> statements = new ArrayList<>();
		for (String event : this.events) {
			if (!event.startsWith("call:")) {
				statements.addAll(List.of(event.split(";\n")));
			}
		}
		return statements;
	}

	/**
	 * How many round trips the recorded SQL texts took (connection calls not counted).
	 * @return the executed texts
	 */
	long roundTrips() {
		return this.events.stream().filter((event) -> !event.startsWith("call:")).count();
	}

	/**
	 * The connection calls recorded.
	 * @return the calls
	 */
	List<String> calls() {
		return this.events.stream().filter((event) -> event.startsWith("call:")).toList();
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
					if (CALLS.contains(method.getName())) {
						this.events.add("call:" + method.getName());
					}
					Object result = invoke(method, connection, arguments);
					if (method.getName().equals("prepareStatement") && arguments != null
							&& arguments[0] instanceof String sql) {
						return recording((PreparedStatement) result, sql);
					}
					return result;
				});
	}

	private PreparedStatement recording(PreparedStatement statement, String sql) {
		return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { PreparedStatement.class }, (proxy, method, arguments) -> {
					if (method.getName().startsWith("execute")) {
						this.events.add(sql);
					}
					return invoke(method, statement, arguments);
				});
	}

	private static Object invoke(java.lang.reflect.Method method, Object target, Object[] arguments) throws Throwable {
		try {
			return method.invoke(target, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
