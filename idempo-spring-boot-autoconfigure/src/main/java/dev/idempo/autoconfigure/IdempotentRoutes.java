package dev.idempo.autoconfigure;

import java.util.List;
import java.util.Objects;

import dev.idempo.core.IdempotentRoute;

/**
 * The {@code idempo.routes} entries as the web flows read them, Spring MVC's and
 * WebFlux's alike; a class of its own, as {@link RoutePatterns} is, so that only a web
 * application loads {@link IdempotentRoute} (and spring-web's path patterns).
 *
 * @author idempo
 */
public final class IdempotentRoutes {

	private IdempotentRoutes() {
	}

	/**
	 * The configured routes, in order.
	 * @param properties the properties
	 * @return the routes
	 */
	public static List<IdempotentRoute> of(IdempotencyProperties properties) {
		return properties.getRoutes().stream().map(IdempotentRoutes::route).toList();
	}

	private static IdempotentRoute route(RouteProperties route) {
		// checked when bound (IdempotencyProperties.validate)
		ResponseStorageProperties responses = route.getResponses();
		FingerprintProperties fingerprint = route.getFingerprint();
		return new IdempotentRoute(Objects.requireNonNull(route.getPath()), route.getMethods(),
				new IdempotentRoute.Settings(route.getTtl(), route.isRequired(), route.isCacheResponse(),
						(responses != null) ? responses.toPolicy() : null,
						(fingerprint != null) ? fingerprint.toOptions() : null));
	}

}
