package dev.idempo.web.faults;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import dev.idempo.testsupport.TcpProxy;
import dev.idempo.testsupport.TestRedis;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Cut and slow connections on the Redis store: Lettuce's one shared connection goes
 * through the proxy, with a command timeout ({@code spring.data.redis.timeout}) of
 * {@link #TIMEOUT}.
 * <ul>
 * <li>A claim whose connection is reset is answered 503 at once (Lettuce fails the
 * command whose reply was cut); one that is black-holed or slower than the timeout when
 * its command times out, within the timeout.</li>
 * <li>A complete that fails so waits up to the timeout, and so does the release that
 * follows it: the handler's response leaves within twice the timeout.</li>
 * <li>A claim the server carried out but whose client never learnt of it (a reply cut, or
 * a command held by a black hole and delivered once it heals) leaves a lock that nobody
 * renews: its key answers 409 until the lease ({@code idempo.lock-ttl}) runs out, then
 * runs the handler once.</li>
 * </ul>
 *
 * @author idempo
 */
class RedisConnectionFaultsHttpTests extends ConnectionFaultsHttpTests {

	private static final URI REDIS = URI.create(TestRedis.server().url());

	private static final TcpProxy proxy = TcpProxy.start(0, REDIS.getHost(), REDIS.getPort());

	private static final String KEY_PREFIX = "idempo-faults:" + UUID.randomUUID().toString().replace("-", "") + ":";

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("idempo.store.type", () -> "redis");
		registry.add("idempo.store.redis.key-prefix", () -> KEY_PREFIX);
		registry.add("spring.data.redis.url", RedisConnectionFaultsHttpTests::proxiedUrl);
		registry.add("spring.data.redis.timeout", () -> TIMEOUT.toMillis() + "ms");
		registry.add("spring.data.redis.connect-timeout", () -> TIMEOUT.toMillis() + "ms");
	}

	@AfterAll
	static void cleanUp() {
		proxy.close();
		TestRedis.server().deleteKeys(KEY_PREFIX);
	}

	private static String proxiedUrl() {
		try {
			return new URI(REDIS.getScheme(), REDIS.getUserInfo(), "127.0.0.1", proxy.port(), REDIS.getPath(),
					REDIS.getQuery(), null)
				.toString();
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	TcpProxy proxy() {
		return proxy;
	}

	@Override
	Duration claimBound() {
		return TIMEOUT.plus(MARGIN);
	}

	@Override
	Duration completeBound() {
		return TIMEOUT.multipliedBy(2).plus(MARGIN);
	}

	/**
	 * The lease: a claim that Redis carried out while its client got a failure (its reply
	 * cut, or its command delivered once a black hole heals) holds the key until
	 * {@code idempo.lock-ttl} runs out, since nobody renews it.
	 */
	@Override
	Duration leftBehindBound() {
		return LOCK_TTL.plus(MARGIN).plus(MARGIN);
	}

}
