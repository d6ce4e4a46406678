package dev.idempo.benchmark;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Counts the measured requests in progress (everything outside {@code /bench/} and
 * {@code /actuator/}), so the script can wait until requests that were cut off at the end
 * of a load run have finished before it reads the counters.
 *
 * @author idempo
 */
class InFlightFilter extends OncePerRequestFilter {

	private final BenchmarkCounters counters;

	InFlightFilter(BenchmarkCounters counters) {
		this.counters = counters;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		String path = request.getRequestURI();
		return path.startsWith("/bench/") || path.startsWith("/actuator/");
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		this.counters.inFlight().incrementAndGet();
		try {
			chain.doFilter(request, response);
		}
		finally {
			this.counters.inFlight().decrementAndGet();
		}
	}

}
