package dev.idempo.testsupport;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound, so that any blocking call on a non-blocking thread (Reactor's
 * {@code parallel} and {@code single} workers, Netty's and so Lettuce's event loops)
 * fails with {@code BlockingOperationError} where it happens.
 * <p>
 * Registered for autodetection (a module's
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and
 * {@code junit.jupiter.extensions.autodetection.enabled=true} in its
 * {@code junit-platform.properties}): JUnit creates it before any test class runs, so
 * BlockHound is in place before any Reactor scheduler starts a thread. Installed later,
 * it would retransform the classes of threads already running, which kills Reactor's
 * started workers and hangs the suite: never install it from a test. Surefire's
 * {@code argLine} needs {@code -XX:+AllowRedefinitionToAddDeleteMethods} on JDK 13+.
 * <p>
 * Allowed, in tests only (an application that installs BlockHound decides its own
 * allowances): {@code SecureRandom} reading {@code /dev/urandom}, which does not block
 * ({@code /dev/random}'s seed generation stays forbidden); Lettuce's bookkeeping of the
 * commands being written on a connection ({@code SharedLock}), a {@code ReentrantLock}
 * that Lettuce 7 takes on every command, held for a counter update, but also held
 * exclusively while the connection reconnects or closes, so that a command written then
 * parks until the exclusive section ends (Lettuce itself parks briefly on reconnect; a
 * {@code BlockingOperationError} thrown inside the lock would wedge the connection for
 * good); and the cluster client's cache of each slot's write connection, whose lambda
 * takes a {@code ReentrantLock} for an array update.
 *
 * @author idempo
 */
public final class BlockHoundExtension implements BeforeAllCallback {

	private static final AtomicBoolean installed = new AtomicBoolean();

	/**
	 * Installs BlockHound once per JVM, when JUnit first creates the extension.
	 */
	public BlockHoundExtension() {
		install();
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		install();
	}

	private static void install() {
		if (installed.compareAndSet(false, true)) {
			// with the integrations on the class path (Reactor's, Netty's), which
			// BlockHound.builder() alone would leave out
			BlockHound.install((builder) -> builder
				.allowBlockingCallsInside("sun.security.provider.NativePRNG$RandomIO", "implNextBytes")
				// Lettuce 7 counts a connection's writers under a ReentrantLock held for
				// a
				// counter update; a reconnect or close holds it exclusively, so writers
				// park until that section ends
				.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
				.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "decrementWriters")
				// Lettuce's cluster client caches the write connection of each slot; the
				// lambda of getWriteConnection takes a ReentrantLock for an array update
				.allowBlockingCallsInside("io.lettuce.core.cluster.PooledClusterConnectionProvider",
						"lambda$getWriteConnection$1"));
		}
	}

}
