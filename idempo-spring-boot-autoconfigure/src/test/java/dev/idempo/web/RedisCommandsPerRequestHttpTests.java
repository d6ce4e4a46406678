package dev.idempo.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.idempo.testsupport.TestRedis;
import dev.idempo.web.RedisCommandRecorder.Command;
import dev.idempo.web.testapp.HttpTestApplication;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one request costs in Redis round trips through the real Spring MVC flow, with each
 * client Spring Boot supports: every command the application sends goes through a
 * {@link RedisCommandRecorder}, so a command added to the request path (a second script,
 * a {@code SCRIPT LOAD} or {@code EXISTS} check, a {@code PING} or {@code SELECT} on
 * every borrowed connection, a renewal scheduled for a short request) fails here. A fresh
 * key is two commands, the claim script and the complete script, both by {@code EVALSHA};
 * a replay is one, the claim script that found the record.
 *
 * @author idempo
 */
class RedisCommandsPerRequestHttpTests {

	private static final String KEY_PREFIX = "idempo-test:" + UUID.randomUUID().toString().replace("-", "") + ":";

	private static final String ORDER = "{\"item\":\"book\",\"quantity\":1}";

	private static final int REQUESTS = 20;

	private static final String CLAIM_SHA = sha1("claim.lua");

	private static final String COMPLETE_SHA = sha1("complete.lua");

	private static RedisCommandRecorder recorder;

	@BeforeAll
	static void startRecorder() {
		URI real = URI.create(TestRedis.server().url());
		recorder = RedisCommandRecorder.start(real.getHost(), real.getPort());
	}

	@AfterAll
	static void stopRecorder() {
		if (recorder != null) {
			recorder.close();
		}
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "lettuce", "jedis" })
	void aFreshKeyIsTwoScriptsAndAReplayOne(String client) {
		URI redis = TestHttp.onLoopbackPort(URI.create(TestRedis.server().url()), recorder.port());
		try (ConfigurableApplicationContext application = start(redis, client)) {
			TestHttp http = TestHttp.of(application);
			// the first requests may open connections and load the scripts
			exchange(http, TestHttp.newKey());
			for (int i = 0; i < REQUESTS; i++) {
				String key = TestHttp.newKey();
				recorder.clear();
				HttpResponse<byte[]> fresh = http.postWithKey("/t/orders", key, ORDER);
				assertThat(fresh.statusCode()).isEqualTo(201);
				assertThat(fresh.headers().firstValue("Idempotent-Replayed")).isEmpty();
				assertThat(scripts(recorder.commands())).as("%s, fresh key", client)
					.containsExactly("EVALSHA " + CLAIM_SHA, "EVALSHA " + COMPLETE_SHA);
				recorder.clear();
				HttpResponse<byte[]> replay = http.postWithKey("/t/orders", key, ORDER);
				assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
				assertThat(scripts(recorder.commands())).as("%s, replay", client)
					.containsExactly("EVALSHA " + CLAIM_SHA);
			}
		}
	}

	/**
	 * With replica acknowledgements, a fresh key's complete is followed by {@code WAIT}
	 * on the connection that wrote, a dedicated one kept from one complete to the next,
	 * not opened for each; a replay does not wait. The test server has no replica: each
	 * {@code WAIT} times out after a few milliseconds and the record stays stored.
	 */
	@Test
	void aFreshKeyAwaitingReplicasAddsOnlyWait() {
		URI redis = TestHttp.onLoopbackPort(URI.create(TestRedis.server().url()), recorder.port());
		try (ConfigurableApplicationContext application = start(redis, "lettuce",
				"--idempo.store.redis.replica-acknowledgements=1",
				"--idempo.store.redis.replica-acknowledgement-timeout=5ms")) {
			TestHttp http = TestHttp.of(application);
			exchange(http, TestHttp.newKey());
			int connections = recorder.connections();
			for (int i = 0; i < 5; i++) {
				String key = TestHttp.newKey();
				recorder.clear();
				assertThat(http.postWithKey("/t/orders", key, ORDER).statusCode()).isEqualTo(201);
				List<Command> fresh = recorder.commands();
				assertThat(scripts(fresh)).containsExactly("EVALSHA " + CLAIM_SHA, "EVALSHA " + COMPLETE_SHA, "WAIT 1");
				assertThat(fresh.get(2).connection()).as("WAIT on the connection that wrote")
					.isEqualTo(fresh.get(1).connection());
				recorder.clear();
				HttpResponse<byte[]> replay = http.postWithKey("/t/orders", key, ORDER);
				assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
				assertThat(scripts(recorder.commands())).containsExactly("EVALSHA " + CLAIM_SHA);
			}
			assertThat(recorder.connections()).as("no connection opened per complete").isEqualTo(connections);
		}
	}

	private static void exchange(TestHttp http, String key) {
		assertThat(http.postWithKey("/t/orders", key, ORDER).statusCode()).isEqualTo(201);
		assertThat(http.postWithKey("/t/orders", key, ORDER).headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");
	}

	/** Each command as its name and, for scripts, the digest or source it ran. */
	private static List<String> scripts(List<Command> commands) {
		return commands.stream()
			.map((command) -> (command.parts().size() > 1) ? command.name() + " " + command.parts().get(1)
					: command.name())
			.toList();
	}

	private static ConfigurableApplicationContext start(URI redis, String client, String... more) {
		List<String> args = new ArrayList<>(
				List.of("--server.port=0", "--idempo.store.type=redis", "--idempo.store.redis.key-prefix=" + KEY_PREFIX,
						"--spring.data.redis.url=" + redis, "--spring.data.redis.client-type=" + client));
		args.addAll(List.of(more));
		return new SpringApplication(HttpTestApplication.class).run(args.toArray(String[]::new));
	}

	private static String sha1(String script) {
		try (InputStream in = RedisCommandsPerRequestHttpTests.class
			.getResourceAsStream("/dev/idempo/store/redis/" + script)) {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(in.readAllBytes()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
