package dev.idempo.client;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Installs BlockHound once, before the first test class of the module runs (registered in
 * {@code META-INF/services}, with extension autodetection on in
 * {@code junit-platform.properties}), so that Reactor's and Netty's non-blocking threads
 * exist only instrumented. A blocking call on such a thread fails where it happens (a
 * {@link BlockingOperationError}) and, because an error thrown in a callback may be
 * swallowed there, also fails the test that made it. What is allowed is what applications
 * get: the integrations BlockHound finds, idempo's {@link ClientBlockHoundIntegration}
 * among them.
 *
 * @author idempo
 */
public class BlockHoundExtension implements BeforeAllCallback, AfterEachCallback {

	/** The tag of a test that blocks a non-blocking thread on purpose. */
	static final String EXPECTS_BLOCKING = "expects-blocking";

	private static final List<String> DETECTED = new CopyOnWriteArrayList<>();

	private static boolean installed;

	@Override
	public void beforeAll(ExtensionContext context) {
		install();
	}

	private static synchronized void install() {
		if (installed) {
			return;
		}
		// the integrations on the class path (Reactor's, Netty's, Spring's, idempo's
		// ClientBlockHoundIntegration) are loaded too: no allowance of the tests' own
		BlockHound.install((builder) -> builder.blockingMethodCallback((method) -> {
			DETECTED.add(method + " on " + Thread.currentThread().getName());
			throw new BlockingOperationError(method);
		}));
		installed = true;
	}

	@Override
	public void afterEach(ExtensionContext context) {
		List<String> detected = List.copyOf(DETECTED);
		DETECTED.clear();
		if (!context.getTags().contains(EXPECTS_BLOCKING)) {
			assertThat(detected).as("blocking calls on non-blocking threads").isEmpty();
		}
	}

}
