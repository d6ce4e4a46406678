package dev.idempo.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import redis.embedded.RedisServer;

import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Semantics;

/**
 * A Redis 7 of the chaos test's own, from the {@code org.signal:embedded-redis} artifact,
 * on a fixed loopback port. It keeps nothing on disk ({@code save ""},
 * {@code appendonly no}, as the machine's Redis), so a restart is a real restart that
 * loses every lease and record: the README's "Records survive a restart only if Redis
 * persists data".
 *
 * @author idempo
 */
final class RedisChaosStore implements ChaosStore {

	/** Short leases, so that the keys of a killed instance are free again soon. */
	static final Duration LOCK_TTL = Duration.ofSeconds(3);

	private final int port = ChaosStore.fixedPort();

	private @Nullable RedisServer server;

	@Override
	public String name() {
		return "redis";
	}

	@Override
	public Semantics semantics() {
		return new Semantics(false, LOCK_TTL);
	}

	@Override
	public void start(Path directory) {
		RedisServer server = RedisServer.builder()
			.bind("127.0.0.1")
			.port(this.port)
			.setting("save \"\"")
			.setting("appendonly no")
			.build();
		this.server = server;
		server.start();
	}

	@Override
	public List<String> applicationArguments() {
		return List.of("--idempo.store.type=redis", "--idempo.lock-ttl=" + LOCK_TTL.toMillis() + "ms",
				"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + this.port,
				// generous: a timeout under a busy machine's load would release keys
				// without an
				// injected fault
				"--spring.data.redis.timeout=5s", "--spring.data.redis.connect-timeout=1s");
	}

	@Override
	public boolean transactional() {
		return false;
	}

	@Override
	public void stop() {
		server().stop();
	}

	@Override
	public void startAgain() {
		server().start();
	}

	@Override
	public List<Execution> transactionalEffects() {
		return List.of();
	}

	@Override
	public void close() {
		RedisServer server = this.server;
		if (server != null && server.isActive()) {
			server.stop();
		}
	}

	private RedisServer server() {
		RedisServer server = this.server;
		if (server == null) {
			throw new IllegalStateException("Redis was never started");
		}
		return server;
	}

}
