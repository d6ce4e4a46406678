package dev.idempo.client;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound, in applications that install it, what of idempo's client may look
 * like blocking on a non-blocking thread and is not: making a random key reads
 * {@code /dev/urandom} through {@code SecureRandom}, which never waits. Found by
 * BlockHound through {@code META-INF/services}.
 *
 * @author idempo
 */
public class ClientBlockHoundIntegration implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside(KeyedCallPolicy.class.getName(), "randomKey");
	}

}
