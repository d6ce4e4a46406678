package dev.idempo.benchmark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseEnvelope;
import dev.idempo.web.CapturingResponse;
import dev.idempo.web.RequestFingerprint;

import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Prints what storing a response costs per request, for a typical 2 KB JSON body and a 64
 * KB one: idempo's way (keep the bytes the converter writes) against the alternative of
 * serialising the body object a second time in a {@code ResponseBodyAdvice}. Not a test:
 * run it with
 * {@code ./mvnw -q -pl idempo-spring-boot-autoconfigure test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=dev.idempo.benchmark.CaptureBenchmark}.
 *
 * @author idempo
 */
public final class CaptureBenchmark {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final IdempotencySettings settings = IdempotencySettings.defaults();

	private static volatile Object sink;

	private CaptureBenchmark() {
	}

	record Line(String sku, String description, int quantity, long priceCents) {
	}

	record Order(String id, String customer, String status, List<Line> lines, Map<String, String> metadata) {
	}

	public static void main(String[] args) throws Exception {
		System.out.printf("%-48s %12s %12s%n", "operation (per request)", "2 KB body", "64 KB body");
		Order small = order(14);
		Order large = order(450);
		System.out.printf("body sizes: %d and %d bytes%n", mapper.writeValueAsBytes(small).length,
				mapper.writeValueAsBytes(large).length);
		row("serialise once (what the converter does anyway)", (order) -> sink = mapper.writeValueAsBytes(order), small,
				large);
		row("idempo: capture written bytes + encode envelope", CaptureBenchmark::captureAndEncode, small, large);
		row("alternative: serialise again in advice + encode", CaptureBenchmark::serialiseTwiceAndEncode, small, large);
		row("replay: decode envelope", new Task() {
			final byte[] smallEnvelope = captureAndEncodeResult(small);

			final byte[] largeEnvelope = captureAndEncodeResult(large);

			@Override
			public void run(Order order) {
				sink = ResponseEnvelope.decode((order == small) ? this.smallEnvelope : this.largeEnvelope);
			}
		}, small, large);
		row("fingerprint the request body", (order) -> sink = RequestFingerprint.of("POST", "/orders", null,
				(order == small) ? SMALL_BODY : LARGE_BODY), small, large);
	}

	private static final byte[] SMALL_BODY = new byte[2048];

	private static final byte[] LARGE_BODY = new byte[64 * 1024];

	private static void captureAndEncode(Order order) throws IOException {
		sink = captureAndEncodeResult(order);
	}

	private static byte[] captureAndEncodeResult(Order order) throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(servletResponse);
		response.startCapture(settings.maxResponseSize());
		response.setStatus(201);
		response.setContentType("application/json");
		response.setHeader("Location", "/orders/" + order.id());
		response.getOutputStream().write(mapper.writeValueAsBytes(order));
		CapturedResponse captured = response.captured(settings::isReplayable);
		byte[] envelope = ResponseEnvelope.encode(captured);
		response.flushToClient();
		return envelope;
	}

	private static void serialiseTwiceAndEncode(Order order) throws IOException {
		MockHttpServletResponse servletResponse = new MockHttpServletResponse();
		servletResponse.setStatus(201);
		servletResponse.setContentType("application/json");
		servletResponse.setHeader("Location", "/orders/" + order.id());
		byte[] forStore = mapper.writeValueAsBytes(order);
		servletResponse.getOutputStream().write(mapper.writeValueAsBytes(order));
		sink = ResponseEnvelope.encode(new CapturedResponse(201,
				Map.of("Content-Type", List.of("application/json"), "Location", List.of("/orders/" + order.id())),
				forStore));
	}

	private static Order order(int lines) {
		List<Line> items = new ArrayList<>();
		for (int i = 0; i < lines; i++) {
			items.add(new Line("SKU-" + (100000 + i), "A reasonably descriptive product name number " + i, 1 + i % 5,
					1999L + i * 37));
		}
		return new Order("ord_8e03978e40d543e8", "cus_4242424242", "confirmed", items,
				Map.of("channel", "web", "campaign", "autumn-sale"));
	}

	private static void row(String name, Task task, Order small, Order large) throws Exception {
		System.out.printf("%-48s %9.1f us %9.1f us%n", name, measure(task, small), measure(task, large));
	}

	/** Median of five one-second rounds, after two seconds of warm-up. */
	private static double measure(Task task, Order order) throws Exception {
		run(task, order, 2_000);
		double[] rounds = new double[5];
		for (int i = 0; i < rounds.length; i++) {
			rounds[i] = run(task, order, 1_000);
		}
		Arrays.sort(rounds);
		return rounds[rounds.length / 2];
	}

	private static double run(Task task, Order order, long millis) throws Exception {
		long end = System.nanoTime() + millis * 1_000_000;
		long count = 0;
		long start = System.nanoTime();
		while (System.nanoTime() < end) {
			for (int i = 0; i < 100; i++) {
				task.run(order);
			}
			count += 100;
		}
		return (System.nanoTime() - start) / 1_000.0 / count;
	}

	@FunctionalInterface
	interface Task {

		void run(Order order) throws Exception;

	}

}
