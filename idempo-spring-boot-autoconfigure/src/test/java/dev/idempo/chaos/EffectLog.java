package dev.idempo.chaos;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Marker;

/**
 * The durable side effect of the chaos application's non-transactional handler: an
 * append-only file per instance incarnation, one line per event, each written with one
 * {@code write} and forced to disk ({@link FileChannel#force(boolean)}) before the
 * handler goes on, so that it survives the incarnation's SIGKILL. Lines:
 * <ul>
 * <li>{@code X key id incarnation receivedNanos startNanos status headers body}: an
 * execution, written by the handler before it returns, with the exact response it returns
 * (headers and body in Base64); this line <em>is</em> the effect;</li>
 * <li>{@code M id outcome nanos}: what idempo reported about storing the execution's
 * response ({@code IdempotencyListener.onResponse}), written after the store's answer and
 * before the response leaves.</li>
 * </ul>
 * A line cut short (no newline at the end of a file) never happened: its {@code write}
 * did not complete before the kill.
 *
 * @author idempo
 */
final class EffectLog implements Closeable {

	private static final String SUFFIX = ".effects";

	private final FileChannel channel;

	/**
	 * Opens the log of one incarnation.
	 * @param directory the run's effects directory
	 * @param incarnation the incarnation's name
	 */
	EffectLog(Path directory, String incarnation) {
		try {
			Files.createDirectories(directory);
			this.channel = FileChannel.open(directory.resolve(incarnation.replace('#', '-') + SUFFIX),
					StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Records an execution, durably.
	 * @param execution the execution, its marker ignored
	 */
	void execution(Execution execution) {
		StringBuilder headers = new StringBuilder();
		execution.headers().forEach((name, value) -> headers.append(name).append(": ").append(value).append('\n'));
		append(String.join("\t", "X", execution.key(), execution.id(), execution.incarnation(),
				Long.toString(execution.receivedNanos()), Long.toString(execution.startNanos()),
				Integer.toString(execution.status()), base64(headers.toString().getBytes(StandardCharsets.UTF_8)),
				base64(execution.body())));
	}

	/**
	 * Records what became of an execution's response, durably.
	 * @param id the execution id
	 * @param outcome the outcome idempo reported
	 */
	void marker(String id, String outcome) {
		append(String.join("\t", "M", id, outcome, Long.toString(System.nanoTime())));
	}

	private void append(String line) {
		ByteBuffer buffer = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
		try {
			synchronized (this) {
				while (buffer.hasRemaining()) {
					this.channel.write(buffer);
				}
			}
			// outside the lock: the line is in the file (a SIGKILL no longer loses it),
			// and concurrent forces need not queue behind each other
			this.channel.force(false);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public void close() throws IOException {
		this.channel.close();
	}

	/**
	 * Reads every incarnation's log in a directory.
	 * @param directory the run's effects directory
	 * @return the executions with their markers
	 * @throws IllegalStateException if a complete line is malformed, or a marker names no
	 * execution of its incarnation
	 */
	static List<Execution> read(Path directory) {
		List<Execution> executions = new ArrayList<>();
		if (!Files.isDirectory(directory)) {
			return executions;
		}
		try (Stream<Path> files = Files.list(directory)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(SUFFIX)).sorted().toList()) {
				executions.addAll(readFile(file));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return executions;
	}

	private static List<Execution> readFile(Path file) throws IOException {
		String content = Files.readString(file, StandardCharsets.UTF_8);
		// a last line without its newline was cut by the kill: its write never completed
		String complete = content.substring(0, content.lastIndexOf('\n') + 1);
		Map<String, Execution> executions = new LinkedHashMap<>();
		Map<String, Marker> markers = new HashMap<>();
		for (String line : complete.split("\n")) {
			if (line.isEmpty()) {
				continue;
			}
			String[] fields = line.split("\t", -1);
			if (fields[0].equals("X") && fields.length == 9) {
				executions.put(fields[2],
						new Execution(fields[1], fields[2], fields[3], false, Long.parseLong(fields[4]),
								Long.parseLong(fields[5]), Integer.parseInt(fields[6]), headers(fields[7]),
								Base64.getDecoder().decode(fields[8]), null));
			}
			else if (fields[0].equals("M") && fields.length == 4 && executions.containsKey(fields[1])) {
				// the first marker counts; there is only one per execution
				markers.putIfAbsent(fields[1], new Marker(fields[2], Long.parseLong(fields[3])));
			}
			else {
				throw new IllegalStateException("Malformed line in " + file + ": " + line);
			}
		}
		List<Execution> read = new ArrayList<>();
		for (Execution execution : executions.values()) {
			read.add(new Execution(execution.key(), execution.id(), execution.incarnation(), false,
					execution.receivedNanos(), execution.startNanos(), execution.status(), execution.headers(),
					execution.body(), markers.get(execution.id())));
		}
		return read;
	}

	private static Map<String, String> headers(String base64) {
		Map<String, String> headers = new LinkedHashMap<>();
		for (String line : new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8).split("\n")) {
			int colon = line.indexOf(": ");
			if (colon > 0) {
				headers.put(line.substring(0, colon), line.substring(colon + 2));
			}
		}
		return headers;
	}

	private static String base64(byte[] bytes) {
		return Base64.getEncoder().encodeToString(bytes);
	}

}
