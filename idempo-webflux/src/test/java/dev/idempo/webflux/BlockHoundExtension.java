package dev.idempo.webflux;

import org.junit.jupiter.api.extension.Extension;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound in the test JVM: from then on, a blocking call on a non-blocking
 * thread (Reactor's parallel schedulers, Netty's event loops) fails with
 * {@code BlockingOperationError}. Registered for automatic detection
 * ({@code META-INF/services}, {@code junit-platform.properties}), so that JUnit creates
 * it before any test, and so before any Reactor scheduler thread starts: installed later,
 * BlockHound would not see threads already running. The one blocking call allowed is what
 * SPEC allows: {@code SecureRandom} reading {@code /dev/urandom}, which does not block.
 *
 * @author idempo
 */
public class BlockHoundExtension implements Extension {

	static {
		BlockHound.install((builder) -> builder.allowBlockingCallsInside("java.security.SecureRandom", "nextBytes"));
	}

}
