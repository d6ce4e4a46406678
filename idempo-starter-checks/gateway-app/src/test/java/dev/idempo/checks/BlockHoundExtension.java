package dev.idempo.checks;

import org.junit.jupiter.api.extension.Extension;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound before any test, and so before any Reactor thread starts
 * (registered for automatic detection): a blocking call on an event loop of the gateway
 * fails. The one blocking call allowed is {@code SecureRandom} reading
 * {@code /dev/urandom}, which does not block.
 *
 * @author idempo
 */
public class BlockHoundExtension implements Extension {

	static {
		BlockHound.install((builder) -> builder.allowBlockingCallsInside("java.security.SecureRandom", "nextBytes"));
	}

}
