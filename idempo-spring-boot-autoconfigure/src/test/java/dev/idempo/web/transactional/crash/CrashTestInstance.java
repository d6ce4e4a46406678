package dev.idempo.web.transactional.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * One instance of {@link CrashTestApplication} in a JVM of its own, started with the
 * test's own {@code java} and class path, and killed with SIGKILL: on Linux
 * {@link Process#destroyForcibly()} sends {@code SIGKILL}, so nothing in the child runs
 * after it, and the kernel closes its connections. It can be started again after a kill
 * (a new incarnation, named {@code <name>#<n>} in the rows it writes, on a new port).
 * Output goes to {@code target/crash-tests/<run>/<name>-<n>.log}.
 */
final class CrashTestInstance {

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

	private final String name;

	private final Path directory;

	private final List<String> arguments;

	private int incarnation;

	private @Nullable Process process;

	private @Nullable Path portFile;

	private @Nullable Path logFile;

	private volatile int port;

	/**
	 * Describes an instance; nothing runs before {@link #start()}.
	 * @param name its name
	 * @param directory the directory of this run (logs, port files, signals)
	 * @param arguments the application's arguments, such as
	 * {@code --spring.datasource.url=...}
	 */
	CrashTestInstance(String name, Path directory, List<String> arguments) {
		this.name = name;
		this.directory = directory;
		this.arguments = List.copyOf(arguments);
	}

	/**
	 * The name the current incarnation writes into its rows.
	 * @return {@code <name>#<n>}
	 */
	synchronized String incarnationName() {
		return this.name + "#" + this.incarnation;
	}

	/**
	 * The port of the running, ready incarnation.
	 * @return the port, 0 if it is not running or not ready yet
	 */
	int port() {
		return this.port;
	}

	/**
	 * Starts a new incarnation without waiting for it ({@link #awaitReady()}).
	 * @throws IllegalStateException if one is running
	 */
	synchronized void start() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException(incarnationName() + " is running");
		}
		this.incarnation++;
		this.port = 0;
		Path portFile = this.directory.resolve(this.name + "-" + this.incarnation + ".port");
		Path logFile = this.directory.resolve(this.name + "-" + this.incarnation + ".log");
		List<String> command = new ArrayList<>(List.of(javaExecutable(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
				"-Xshare:auto", "-XX:+UseSerialGC", "-cp", classPath(), CrashTestApplication.class.getName()));
		command.addAll(this.arguments);
		command.add("--crash.instance=" + incarnationName());
		command.add("--crash.port-file=" + portFile.toAbsolutePath());
		command.add("--server.port=0");
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logFile.toFile());
		try {
			Files.deleteIfExists(portFile);
			this.process = builder.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + incarnationName(), ex);
		}
		this.portFile = portFile;
		this.logFile = logFile;
	}

	/**
	 * Starts a new incarnation unless one is running, without waiting for it.
	 */
	synchronized void startUnlessAlive() {
		if (!isAlive()) {
			start();
		}
	}

	/**
	 * Starts a new incarnation unless one is running, and waits until it serves requests.
	 */
	void ensureReady() {
		startUnlessAlive();
		if (this.port == 0) {
			awaitReady();
		}
	}

	/**
	 * Waits (polling its port file) until the incarnation serves requests.
	 * @throws IllegalStateException if it exited or is not ready in time, with its log
	 */
	void awaitReady() {
		Process process;
		Path portFile;
		synchronized (this) {
			process = this.process;
			portFile = this.portFile;
		}
		if (process == null || portFile == null) {
			throw new IllegalStateException(this.name + " was never started");
		}
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (!Files.exists(portFile)) {
			if (!process.isAlive()) {
				throw new IllegalStateException(incarnationName() + " exited with " + process.exitValue()
						+ " before it was ready:\n" + logTail());
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(
						incarnationName() + " was not ready within " + READY_TIMEOUT + ":\n" + logTail());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		try {
			this.port = Integer.parseInt(Files.readString(portFile, StandardCharsets.UTF_8).trim());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Whether the current incarnation's process is alive.
	 * @return whether it is
	 */
	synchronized boolean isAlive() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Kills the current incarnation with SIGKILL and waits until it has exited.
	 * @throws IllegalStateException if it does not exit
	 */
	void kill() {
		Process process;
		synchronized (this) {
			process = this.process;
		}
		this.port = 0;
		if (process == null) {
			return;
		}
		process.destroyForcibly();
		try {
			if (!process.waitFor(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException(incarnationName() + " did not exit after SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		// 128 + 9: killed by SIGKILL, not exited on its own
		if (process.exitValue() != 137) {
			throw new IllegalStateException(
					incarnationName() + " exited with " + process.exitValue() + ", not by SIGKILL:\n" + logTail());
		}
	}

	/**
	 * The end of the current incarnation's log, for failure messages.
	 * @return up to its last 40 lines
	 */
	synchronized String logTail() {
		Path logFile = this.logFile;
		if (logFile == null) {
			return "(no log)";
		}
		try {
			List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
			return logFile + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException | UncheckedIOException ex) {
			return "(log " + logFile + " unreadable: " + ex + ")";
		}
	}

	private static String javaExecutable() {
		Path java = Path.of(System.getProperty("java.home"), "bin", "java");
		if (Files.isExecutable(java)) {
			return java.toString();
		}
		return ProcessHandle.current().info().command().orElseThrow();
	}

	/**
	 * The test class path: under Surefire {@code java.class.path} may be no more than its
	 * booter jar, and {@code surefire.test.class.path} holds the real one.
	 */
	private static String classPath() {
		String surefire = System.getProperty("surefire.test.class.path");
		String classPath = (surefire != null && !surefire.isBlank()) ? surefire : System.getProperty("java.class.path");
		if (classPath == null || classPath.isBlank()) {
			throw new IllegalStateException("No class path to start the application with");
		}
		return classPath;
	}

}
