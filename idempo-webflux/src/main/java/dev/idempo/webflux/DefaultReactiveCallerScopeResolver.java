package dev.idempo.webflux;

import java.util.List;

import reactor.core.publisher.Mono;

import dev.idempo.core.CallerScopes;

import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.AuthenticationTrustResolver;
import org.springframework.security.authentication.AuthenticationTrustResolverImpl;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The default caller scope, the same values as Spring MVC's
 * {@code DefaultCallerScopeResolver} gives, so that a client keeps its records whichever
 * stack answers it: the authenticated principal's name when there is one (Spring
 * Security's reactive security context, else the exchange's principal), else a digest of
 * the {@code Authorization} header, else {@code anonymous}.
 *
 * @author idempo
 */
public class DefaultReactiveCallerScopeResolver implements ReactiveCallerScopeResolver {

	/** The scope of requests without a principal or an {@code Authorization} header. */
	public static final String ANONYMOUS = CallerScopes.ANONYMOUS;

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.ReactiveSecurityContextHolder",
			DefaultReactiveCallerScopeResolver.class.getClassLoader());

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		Mono<String> principal = exchange.getPrincipal().map((candidate) -> candidate.getName());
		if (SPRING_SECURITY_PRESENT) {
			principal = SpringSecurity.principalName().switchIfEmpty(principal);
		}
		return principal.map(DefaultReactiveCallerScopeResolver::principalScope)
			.switchIfEmpty(Mono.fromSupplier(() -> anonymousScope(exchange)));
	}

	private static String anonymousScope(ServerWebExchange exchange) {
		// every header line as sent, not split at commas, as the servlet API gives them
		List<String> authorization = exchange.getRequest().getHeaders().get(HttpHeaders.AUTHORIZATION);
		return (authorization == null || authorization.isEmpty()) ? ANONYMOUS : authorizationScope(authorization);
	}

	/**
	 * The scope of requests made by an authenticated principal.
	 * @param name the principal's name
	 * @return {@code principal:<name>}
	 */
	public static String principalScope(String name) {
		return CallerScopes.principal(name);
	}

	/**
	 * The scope of requests without an authenticated principal that carry these
	 * {@code Authorization} header values: a SHA-256 over each value's length (four
	 * bytes, big-endian) and its UTF-8 bytes, in order.
	 * @param values the header's values, one per header line
	 * @return {@code authorization:<hex digest>}
	 */
	public static String authorizationScope(List<String> values) {
		return CallerScopes.authorization(values);
	}

	private static final class SpringSecurity {

		private static final AuthenticationTrustResolver trustResolver = new AuthenticationTrustResolverImpl();

		static Mono<String> principalName() {
			return ReactiveSecurityContextHolder.getContext()
				.mapNotNull(SecurityContext::getAuthentication)
				.filter(SpringSecurity::isAuthenticated)
				.map(Authentication::getName);
		}

		private static boolean isAuthenticated(Authentication authentication) {
			return authentication.isAuthenticated() && !trustResolver.isAnonymous(authentication);
		}

	}

}
