package dev.idempo.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import io.lettuce.core.RedisException;
import org.jspecify.annotations.Nullable;

/**
 * What the tests that start {@code redis-server} processes of their own
 * ({@link TestRedisCluster}, {@link TestRedisSentinel}) share: waiting for a server,
 * stopping one, and their temporary directories.
 *
 * @author idempo
 */
final class RedisProcesses {

	private RedisProcesses() {
	}

	/**
	 * Polls {@code condition} every 50 ms until it holds; a {@link RedisException} counts
	 * as "not yet".
	 * @param what what is awaited, for the failure message
	 * @param timeout how long at most
	 * @param condition the condition
	 * @throws IllegalStateException if it does not hold in time
	 */
	static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		@Nullable RedisException lastFailure = null;
		while (System.nanoTime() < deadline) {
			try {
				if (condition.getAsBoolean()) {
					return;
				}
			}
			catch (RedisException ex) {
				// not there yet
				lastFailure = ex;
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for " + what, ex);
			}
		}
		throw new IllegalStateException("Timed out after " + timeout.toSeconds() + "s waiting for " + what
				+ ((lastFailure != null) ? "; last failure: " + lastFailure : ""));
	}

	/**
	 * Stops a server: SIGTERM, then SIGKILL if it has not exited within 10 s.
	 * @param process the server's process
	 */
	static void stop(Process process) {
		try {
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			process.destroyForcibly();
		}
	}

	/**
	 * A new temporary directory for a server.
	 * @param prefix the directory name's prefix
	 * @return the directory
	 */
	static Path temporaryDirectory(String prefix) {
		try {
			return Files.createTempDirectory(prefix);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Deletes a directory and everything in it, quietly.
	 * @param directory the directory
	 */
	static void deleteRecursively(Path directory) {
		try (Stream<Path> paths = Files.walk(directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// already gone
		}
	}

}
