package dev.idempo.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Semantics;

/**
 * A store server of the chaos test's own, which the test can stop and start again on the
 * same port with the same data. The chaos test never restarts a server that anything else
 * uses (such as the machine's PostgreSQL, MariaDB or Redis), so it always starts its own,
 * from Maven Central artifacts; one that cannot be had fails the test.
 *
 * @author idempo
 */
interface ChaosStore extends AutoCloseable {

	/**
	 * The store's name in messages and directories.
	 * @return the name
	 */
	String name();

	/**
	 * What the store keeps across a restart, for the checker.
	 * @return the semantics
	 */
	Semantics semantics();

	/**
	 * Starts the server and creates what the application needs in it.
	 * @param directory a directory of this run for the server's files
	 * @throws Exception if it does not start
	 */
	void start(Path directory) throws Exception;

	/**
	 * The application's arguments that select this store and point it at the server,
	 * known before the server starts (its port is fixed when the store is created): the
	 * instances start while it does.
	 * @return the arguments
	 */
	List<String> applicationArguments();

	/**
	 * Whether the application has the transactional endpoint (SQL stores).
	 * @return whether it does
	 */
	boolean transactional();

	/**
	 * Stops the server and returns once it is down: every session and connection ends.
	 * @throws Exception if it does not stop
	 */
	void stop() throws Exception;

	/**
	 * Starts the server again, on the same port with the data it kept, and returns once
	 * it answers.
	 * @throws Exception if it does not start
	 */
	void startAgain() throws Exception;

	/**
	 * The durable effects of the transactional endpoint: its business rows.
	 * @return one execution per row
	 */
	List<Execution> transactionalEffects();

	/** Stops the server if it runs and deletes its files. */
	@Override
	void close();

	/**
	 * A free loopback port below the kernel's ephemeral range, for a server that is
	 * restarted on the same port: while it is down, no outgoing connection can be given
	 * that port as its local one.
	 * @return the port
	 */
	static int fixedPort() {
		int ephemeralStart = 32768;
		try {
			// a reader: Files.readString reads nothing past the size /proc reports
			String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
			ephemeralStart = Integer.parseInt(range.split("\\s+")[0]);
		}
		catch (IOException | RuntimeException ex) {
			// not Linux, or unreadable: the usual default
		}
		if (ephemeralStart < 4096) {
			// no room below the range: any free port, as elsewhere in the tests
			ephemeralStart = 65536;
		}
		int low = Math.max(1024, ephemeralStart - 12000);
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(low, ephemeralStart);
			try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
				return port;
			}
			catch (IOException ex) {
				// taken: another one
			}
		}
		throw new IllegalStateException("No free port between " + low + " and " + ephemeralStart);
	}

}
