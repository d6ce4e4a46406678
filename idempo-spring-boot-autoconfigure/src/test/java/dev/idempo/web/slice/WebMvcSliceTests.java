package dev.idempo.web.slice;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @WebMvcTest} slice includes idempo: its interceptor, filter and store are
 * auto-configured for the slice, so a controller test sees replays and 409s as the
 * application does.
 */
@WebMvcTest(controllers = WebMvcSliceTests.OrdersController.class,
		properties = "spring.autoconfigure.exclude=org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration")
@ContextConfiguration(classes = { WebMvcSliceTests.SliceApplication.class, WebMvcSliceTests.OrdersController.class })
class WebMvcSliceTests {

	static final AtomicInteger executions = new AtomicInteger();

	@Autowired
	MockMvcTester mvc;

	@Test
	void retryIsReplayedInTheSlice() {
		int before = executions.get();
		MvcTestResult first = post("slice-key-1");
		MvcTestResult retry = post("slice-key-1");
		assertThat(first).hasStatus(201);
		assertThat(retry).hasStatus(201).hasHeader("Idempotent-Replayed", "true");
		assertThat(retry.getResponse().getContentAsByteArray()).isEqualTo(first.getResponse().getContentAsByteArray());
		assertThat(executions.get() - before).isEqualTo(1);
	}

	private MvcTestResult post(String key) {
		return this.mvc.post()
			.uri("/orders")
			.header("Idempotency-Key", key)
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"item\":\"book\"}")
			.exchange();
	}

	@SpringBootApplication
	static class SliceApplication {

	}

	@RestController
	static class OrdersController {

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, String> order) {
			return ResponseEntity.status(201).body(Map.of("order", order, "number", executions.incrementAndGet()));
		}

	}

}
