package dev.idempo.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * One instance of a Spring Boot test application in a JVM of its own, started with the
 * test's own {@code java} and class path, and killed with SIGKILL: on Linux
 * {@link Process#destroyForcibly()} sends {@code SIGKILL}, so nothing in the child runs
 * after it, and the kernel closes its connections. An in-process test cannot do that. It
 * can be started again after a kill (a new incarnation, named {@code <name>#<n>}, on a
 * new port). Output goes to {@code <directory>/<name>-<n>.log}.
 * <p>
 * The application's {@code main} calls {@link #run(Class, String[])}, which tells the
 * test its port once it serves, through the file named by {@value #PORT_FILE_PROPERTY},
 * and halts the child when the test JVM goes away. The incarnation's name is the property
 * {@value #INSTANCE_PROPERTY}.
 *
 * @author idempo
 */
public final class ApplicationProcess {

	/** The property that holds the incarnation's name, {@code <name>#<n>}. */
	public static final String INSTANCE_PROPERTY = "idempo-test.instance";

	/** The property that names the file the application writes its port to. */
	public static final String PORT_FILE_PROPERTY = "idempo-test.port-file";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

	private final Class<?> application;

	private final String name;

	private final Path directory;

	private final List<String> jvmOptions;

	private final List<String> arguments;

	private int incarnation;

	private @Nullable Process process;

	private @Nullable Path portFile;

	private @Nullable Path logFile;

	private volatile int port;

	/**
	 * Describes an instance; nothing runs before {@link #start()}.
	 * @param application the application class, whose {@code main} calls
	 * {@link #run(Class, String[])}
	 * @param name its name
	 * @param directory the directory of this run (logs, port files)
	 * @param arguments the application's arguments, such as
	 * {@code --spring.datasource.url=...}
	 */
	public ApplicationProcess(Class<?> application, String name, Path directory, List<String> arguments) {
		this(application, name, directory, List.of(), arguments);
	}

	/**
	 * Describes an instance whose JVM gets options of its own; nothing runs before
	 * {@link #start()}.
	 * @param application the application class, whose {@code main} calls
	 * {@link #run(Class, String[])}
	 * @param name its name
	 * @param directory the directory of this run (logs, port files)
	 * @param jvmOptions options of the child's {@code java}, such as
	 * {@code -XX:+AllowRedefinitionToAddDeleteMethods} for an application that installs
	 * BlockHound
	 * @param arguments the application's arguments, such as
	 * {@code --spring.datasource.url=...}
	 */
	public ApplicationProcess(Class<?> application, String name, Path directory, List<String> jvmOptions,
			List<String> arguments) {
		this.application = application;
		this.name = name;
		this.directory = directory;
		this.jvmOptions = List.copyOf(jvmOptions);
		this.arguments = List.copyOf(arguments);
	}

	/**
	 * Runs an application in the child JVM: call it from {@code main}.
	 * @param application the application class
	 * @param args the command-line arguments
	 * @return the running context
	 */
	public static ConfigurableApplicationContext run(Class<?> application, String[] args) {
		haltWithParent();
		SpringApplication spring = new SpringApplication(application);
		spring.addListeners((ApplicationListener<ApplicationReadyEvent>) ApplicationProcess::announcePort);
		return spring.run(args);
	}

	/**
	 * A child whose test JVM died (killed, or stopped in a debugger and abandoned) must
	 * not go on holding ports, connections and locks.
	 */
	private static void haltWithParent() {
		ProcessHandle.current().parent().ifPresent((parent) -> parent.onExit().thenRun(() -> {
			System.err.println("The test JVM has exited; halting");
			Runtime.getRuntime().halt(3);
		}));
	}

	/** Tells the test on which port the application serves, once it serves. */
	private static void announcePort(ApplicationReadyEvent event) {
		Environment environment = event.getApplicationContext().getEnvironment();
		String port = environment.getRequiredProperty("local.server.port");
		writeAtomically(Path.of(environment.getRequiredProperty(PORT_FILE_PROPERTY)), port);
		System.out.println("test application instance ready on port " + port);
	}

	/**
	 * Writes a file under a temporary name and renames it, so that a test polling for it
	 * never reads it half-written.
	 * @param file the file
	 * @param content its content
	 */
	public static void writeAtomically(Path file, String content) {
		try {
			Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
			Files.writeString(temporary, content, StandardCharsets.UTF_8);
			Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The name of the current incarnation, as the application sees it in
	 * {@value #INSTANCE_PROPERTY}.
	 * @return {@code <name>#<n>}
	 */
	public synchronized String incarnationName() {
		return this.name + "#" + this.incarnation;
	}

	/**
	 * The port of the running, ready incarnation.
	 * @return the port, 0 if it is not running or not ready yet
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Starts a new incarnation without waiting for it ({@link #awaitReady()}).
	 * @throws IllegalStateException if one is running
	 */
	public synchronized void start() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException(incarnationName() + " is running");
		}
		this.incarnation++;
		this.port = 0;
		Path portFile = this.directory.resolve(this.name + "-" + this.incarnation + ".port");
		Path logFile = this.directory.resolve(this.name + "-" + this.incarnation + ".log");
		List<String> command = new ArrayList<>(
				List.of(javaExecutable(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC"));
		command.addAll(this.jvmOptions);
		command.addAll(List.of("-cp", classPath(), this.application.getName()));
		command.addAll(this.arguments);
		command.add("--" + INSTANCE_PROPERTY + "=" + incarnationName());
		command.add("--" + PORT_FILE_PROPERTY + "=" + portFile.toAbsolutePath());
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
	public synchronized void startUnlessAlive() {
		if (!isAlive()) {
			start();
		}
	}

	/**
	 * Starts a new incarnation unless one is running, and waits until it serves requests.
	 */
	public void ensureReady() {
		startUnlessAlive();
		if (this.port == 0) {
			awaitReady();
		}
	}

	/**
	 * Waits (polling its port file) until the incarnation serves requests.
	 * @throws IllegalStateException if it exited or is not ready in time, with its log
	 */
	public void awaitReady() {
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
		int port;
		try {
			port = Integer.parseInt(Files.readString(portFile, StandardCharsets.UTF_8).trim());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		synchronized (this) {
			// killed (and perhaps started again) meanwhile: that incarnation is not ready
			if (this.process == process && process.isAlive()) {
				this.port = port;
			}
		}
	}

	/**
	 * Whether the current incarnation's process is alive.
	 * @return whether it is
	 */
	public synchronized boolean isAlive() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Kills the current incarnation with SIGKILL and waits until it has exited.
	 * @throws IllegalStateException if it does not exit, or had exited on its own
	 */
	public void kill() {
		Process process;
		synchronized (this) {
			process = this.process;
			this.port = 0;
		}
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
	public synchronized String logTail() {
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
	 * The test class path: under Surefire and Failsafe {@code java.class.path} may be no
	 * more than their booter jar, and {@code surefire.test.class.path} holds the real
	 * one.
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
