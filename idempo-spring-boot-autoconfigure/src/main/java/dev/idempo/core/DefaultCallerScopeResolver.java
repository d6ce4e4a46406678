package dev.idempo.core;

import java.security.MessageDigest;
import java.security.Principal;
import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

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
 *
 * @author idempo
 */
public class DefaultCallerScopeResolver implements CallerScopeResolver {

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
			return "principal:" + principal;
		}
		List<String> authorization = Collections.list(request.getHeaders(HttpHeaders.AUTHORIZATION));
		if (!authorization.isEmpty()) {
			MessageDigest digest = Digests.sha256();
			authorization.forEach((value) -> Digests.field(digest, value));
			return "authorization:" + Digests.hex(digest);
		}
		return "anonymous";
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
