package dev.idempo.chaos;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.idempo.chaos.History.Answer;
import dev.idempo.testsupport.ApplicationProcess;

/**
 * The chaos test's retrying client: it sends one request of a key until it gets a final
 * answer, each attempt to a random instance that serves, always with the same key and the
 * same body, retrying on 409, 503 and on requests that got no answer (refused, cut by a
 * kill, timed out), as a client that follows the draft would. It keeps every final answer
 * for the checker, and counts what it retried on.
 *
 * @author idempo
 */
final class ChaosClient {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final List<ApplicationProcess> instances;

	private final List<Answer> answers = new ArrayList<>();

	private final List<String> gaveUp = new ArrayList<>();

	private final AtomicInteger requests = new AtomicInteger();

	private final AtomicInteger conflicts = new AtomicInteger();

	private final AtomicInteger unavailable = new AtomicInteger();

	private final AtomicInteger connectionErrors = new AtomicInteger();

	ChaosClient(List<ApplicationProcess> instances) {
		this.instances = List.copyOf(instances);
	}

	/**
	 * Sends a key's request until it is answered or the deadline passes.
	 * @param key the key and its request
	 * @param deadline the {@link System#nanoTime()} to give up at
	 */
	void send(KeyPlan key, long deadline) {
		while (System.nanoTime() < deadline) {
			int port = randomReadyPort();
			if (port == 0) {
				pace(20);
				continue;
			}
			long sent = System.nanoTime();
			try {
				HttpResponse<byte[]> response = this.http.send(request(port, key),
						HttpResponse.BodyHandlers.ofByteArray());
				long received = System.nanoTime();
				this.requests.incrementAndGet();
				if (response.statusCode() == 409) {
					this.conflicts.incrementAndGet();
				}
				else if (response.statusCode() == 503) {
					this.unavailable.incrementAndGet();
				}
				else {
					answer(new Answer(key.key(), sent, received, response.statusCode(), firstValues(response),
							response.body()));
					return;
				}
			}
			catch (IOException ex) {
				this.requests.incrementAndGet();
				this.connectionErrors.incrementAndGet();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				giveUp(key.key() + ": interrupted");
				return;
			}
			pace(10 + ThreadLocalRandom.current().nextInt(30));
		}
		giveUp(key.key() + ": no final answer before the deadline");
	}

	synchronized List<Answer> answers() {
		return List.copyOf(this.answers);
	}

	synchronized List<String> gaveUp() {
		return List.copyOf(this.gaveUp);
	}

	History.Traffic traffic() {
		return new History.Traffic(this.requests.get(), this.conflicts.get(), this.unavailable.get(),
				this.connectionErrors.get());
	}

	private synchronized void answer(Answer answer) {
		this.answers.add(answer);
	}

	private synchronized void giveUp(String reason) {
		this.gaveUp.add(reason);
	}

	private int randomReadyPort() {
		List<Integer> ports = new ArrayList<>();
		for (ApplicationProcess instance : this.instances) {
			int port = instance.port();
			if (port != 0) {
				ports.add(port);
			}
		}
		return ports.isEmpty() ? 0 : ports.get(ThreadLocalRandom.current().nextInt(ports.size()));
	}

	private static HttpRequest request(int port, KeyPlan key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + key.path()))
			.timeout(REQUEST_TIMEOUT)
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key.key())
			.POST(HttpRequest.BodyPublishers.ofByteArray(key.body()))
			.build();
	}

	private static Map<String, String> firstValues(HttpResponse<byte[]> response) {
		Map<String, String> headers = new LinkedHashMap<>();
		response.headers().map().forEach((name, values) -> {
			if (!values.isEmpty()) {
				headers.put(name, values.get(0));
			}
		});
		return headers;
	}

	/**
	 * A retrying client's pause between attempts. It orders nothing: every outcome the
	 * checker judges holds whatever it is.
	 */
	private static void pace(int millis) {
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
	}

	/**
	 * One key and the request sent with it, every time.
	 *
	 * @param key the idempotency key
	 * @param transactional whether it goes to the transactional endpoint
	 * @param status the status the handler is asked to answer
	 * @param size the size of the padding the handler is asked for
	 */
	record KeyPlan(String key, boolean transactional, int status, int size) {

		String path() {
			return this.transactional ? "/chaos/payments" : "/chaos/effects";
		}

		byte[] body() {
			return ("{\"key\":\"" + this.key + "\",\"status\":" + this.status + ",\"size\":" + this.size + "}")
				.getBytes(StandardCharsets.UTF_8);
		}

	}

}
