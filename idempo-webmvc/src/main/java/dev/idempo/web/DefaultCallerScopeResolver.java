package dev.idempo.web;

import java.security.Principal;
import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.idempo.core.CallerScopes;

import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.AuthenticationTrustResolver;
import org.springframework.security.authentication.AuthenticationTrustResolverImpl;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * The default caller scope: the authenticated principal's name when there is one (Spring
 * Security's, else the servlet container's), else a digest of the {@code Authorization}
 * header, else {@code anonymous}.
 * <p>
 * The static methods give the scope this resolver derives from what a support engineer
 * knows about a caller (a principal's name, an {@code Authorization} value), so that a
 * record can be looked up without a request; they are {@link CallerScopes}', which the
 * {@code idempo} Actuator endpoint uses on every stack.
 *
 * @author idempo
 */
public class DefaultCallerScopeResolver implements CallerScopeResolver {

	/** The scope of requests without a principal or an {@code Authorization} header. */
	public static final String ANONYMOUS = CallerScopes.ANONYMOUS;

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder",
			DefaultCallerScopeResolver.class.getClassLoader());

	@Override
	public String resolve(HttpServletRequest request) {
		String principal = SPRING_SECURITY_PRESENT ? SpringSecurity.principalName() : null;
		if (principal == null) {
			Principal userPrincipal = request.getUserPrincipal();
			principal = (userPrincipal != null) ? userPrincipal.getName() : null;
		}
		if (principal != null) {
			return principalScope(principal);
		}
		List<String> authorization = Collections.list(request.getHeaders(HttpHeaders.AUTHORIZATION));
		if (!authorization.isEmpty()) {
			return authorizationScope(authorization);
		}
		return ANONYMOUS;
	}

	/**
	 * The scope of requests made by an authenticated principal.
	 * @param name the principal's name, as {@code Principal.getName()} or Spring
	 * Security's {@code Authentication.getName()} gives it
	 * @return {@code principal:<name>}
	 */
	public static String principalScope(String name) {
		return CallerScopes.principal(name);
	}

	/**
	 * The scope of requests without an authenticated principal that carry these
	 * {@code Authorization} header values. The values are only hashed: a SHA-256 over
	 * each value's length (four bytes, big-endian) and its UTF-8 bytes, in order.
	 * @param values the header's values, one per header line, as the client sent them
	 * @return {@code authorization:<hex digest>}
	 */
	public static String authorizationScope(List<String> values) {
		return CallerScopes.authorization(values);
	}

	private static final class SpringSecurity {

		private static final AuthenticationTrustResolver trustResolver = new AuthenticationTrustResolverImpl();

		static @Nullable String principalName() {
			Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
			if (authentication == null || !authentication.isAuthenticated()
					|| trustResolver.isAnonymous(authentication)) {
				return null;
			}
			return authentication.getName();
		}

	}

}
