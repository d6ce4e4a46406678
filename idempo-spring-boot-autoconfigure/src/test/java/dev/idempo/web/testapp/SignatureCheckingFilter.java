package dev.idempo.web.testapp;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.UUID;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Runs inside idempo's filter: reads the whole body of {@code /edge/signed} before any
 * handler (as a signature check would), and stamps every response with a fresh request id
 * before the handler runs.
 *
 * @author idempo
 */
@Component
@Order(Ordered.LOWEST_PRECEDENCE - 10)
public class SignatureCheckingFilter extends OncePerRequestFilter {

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		response.setHeader("X-Request-Id", UUID.randomUUID().toString());
		if (request.getRequestURI().equals("/edge/signed")) {
			byte[] body = request.getInputStream().readAllBytes();
			chain.doFilter(new HttpServletRequestWrapper(request) {

				@Override
				public ServletInputStream getInputStream() {
					ByteArrayInputStream in = new ByteArrayInputStream(body);
					return new ServletInputStream() {

						@Override
						public int read() {
							return in.read();
						}

						@Override
						public boolean isFinished() {
							return in.available() == 0;
						}

						@Override
						public boolean isReady() {
							return true;
						}

						@Override
						public void setReadListener(ReadListener listener) {
							throw new UnsupportedOperationException();
						}

					};
				}

			}, response);
			return;
		}
		chain.doFilter(request, response);
	}

}
