package dev.idempo.testsupport;

import java.net.URI;
import java.util.function.Supplier;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * The RabbitMQ server that tests run against, resolved once per test JVM:
 * <ol>
 * <li>the server at {@value #URL_VARIABLE} if that environment variable is set (an
 * {@code amqp://} URL; tests fail if it does not accept a connection);</li>
 * <li>else the local server at {@code 127.0.0.1:5672} ({@code guest}/{@code guest}) if it
 * accepts a connection;</li>
 * <li>else none, and the tests that need one are aborted with the reason, so that a
 * machine without RabbitMQ still builds. With
 * {@value TestServerMode#VARIABLE}{@code =external} they fail instead. No embedded AMQP
 * broker is started: Apache Qpid Broker-J 9.2.0, the AMQP 0-9-1 broker that runs in a
 * JVM, starts in-process and accepts Spring AMQP's connections, but refuses RabbitMQ's
 * dead-letter queue arguments ({@code x-dead-letter-exchange},
 * {@code x-dead-letter-routing-key}: "Unsupported queue declare argument(s)"), and its
 * own ({@code x-qpid-dlq-enabled}) failed to declare the queue ("Unknown alternate
 * destination"), so what these tests prove, a rejected message reaching the dead-letter
 * queue, cannot be shown on it.</li>
 * </ol>
 * Other tests and people share the server: tests declare queues and exchanges of random
 * names, auto-deleted, and never touch others.
 *
 * @author idempo
 */
public final class TestRabbit {

	/** Environment variable with the URL of the RabbitMQ server tests use. */
	public static final String URL_VARIABLE = "IDEMPO_TEST_RABBITMQ_URL";

	private static final String LOCAL_URL = "amqp://guest:guest@127.0.0.1:5672";

	private static final Supplier<Server> SERVER = memoized();

	private TestRabbit() {
	}

	/**
	 * The server tests run against, or an aborted test (a failed one with
	 * {@value TestServerMode#VARIABLE}{@code =external}) if there is none.
	 * @return the server
	 */
	public static Server server() {
		Server server = SERVER.get();
		if (server.url() == null) {
			if (TestServerMode.current() != TestServerMode.AUTO) {
				throw new IllegalStateException(server.description());
			}
			Assumptions.abort(server.description());
		}
		return server;
	}

	private static Supplier<Server> memoized() {
		return new Supplier<>() {

			private @Nullable Server server;

			@Override
			public synchronized Server get() {
				if (this.server == null) {
					this.server = resolve();
					System.out.println("[idempo tests] RabbitMQ: " + this.server.description());
				}
				return this.server;
			}

		};
	}

	private static Server resolve() {
		String url = System.getenv(URL_VARIABLE);
		if (url != null && !url.isBlank()) {
			String failure = connect(url);
			if (failure != null) {
				throw new IllegalStateException(
						URL_VARIABLE + " is set, but the server there does not accept a connection: " + failure);
			}
			return new Server(url, URL_VARIABLE + " (" + url.replaceAll("//[^@/]*@", "//***@") + ")");
		}
		String failure = connect(LOCAL_URL);
		if (failure == null) {
			return new Server(LOCAL_URL, "the local server at 127.0.0.1:5672");
		}
		return new Server(null, "no RabbitMQ server: " + URL_VARIABLE + " is not set and 127.0.0.1:5672 "
				+ "(guest/guest) does not accept a connection (" + failure + "); the tests that need one do not run");
	}

	private static @Nullable String connect(String url) {
		ConnectionFactory factory = new ConnectionFactory();
		try {
			factory.setUri(URI.create(url));
			factory.setConnectionTimeout(2000);
			try (Connection connection = factory.newConnection("idempo-tests-probe")) {
				return connection.isOpen() ? null : "the connection closed at once";
			}
		}
		catch (Exception ex) {
			return ex.getClass().getSimpleName() + ": " + ex.getMessage();
		}
	}

	/**
	 * A RabbitMQ server.
	 *
	 * @param url its {@code amqp://} URL with credentials, {@code null} if there is none
	 * @param description where it comes from, or why there is none
	 */
	public record Server(@Nullable String url, String description) {

		/**
		 * Spring Boot's properties that connect to it.
		 * @return {@code spring.rabbitmq.addresses=...}
		 */
		public String[] springProperties() {
			return new String[] { "spring.rabbitmq.addresses=" + this.url };
		}

	}

}
