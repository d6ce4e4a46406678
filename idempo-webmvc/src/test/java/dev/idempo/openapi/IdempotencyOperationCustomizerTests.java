package dev.idempo.openapi;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;
import dev.idempo.core.FingerprintOptions;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.core.ResponseStoragePolicy;
import dev.idempo.web.IdempotentHandlers;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.method.HandlerMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI description follows the handler's response storage policy and the
 * configured replayed header.
 *
 * @author idempo
 */
class IdempotencyOperationCustomizerTests {

	private static final IdempotencySettings DEFAULTS = IdempotencySettings.defaults();

	private static Operation customize(ResponseStoragePolicy responses, IdempotencySettings settings)
			throws NoSuchMethodException {
		IdempotentHandlers handlers = new IdempotentHandlers((value) -> value, Duration.ofHours(1), false, "none",
				responses, FingerprintOptions.NONE);
		Operation operation = new Operation().responses(new ApiResponses());
		for (String status : List.of("200", "400", "429", "500", "default")) {
			operation.getResponses().addApiResponse(status, new ApiResponse().description(status));
		}
		HandlerMethod handler = new HandlerMethod(new Orders(), Orders.class.getDeclaredMethod("create"));
		return new IdempotencyOperationCustomizer(handlers, settings).customize(operation, handler);
	}

	private static List<String> replayed(Operation operation, String header) {
		return operation.getResponses()
			.entrySet()
			.stream()
			.filter((entry) -> entry.getValue().getHeaders() != null
					&& entry.getValue().getHeaders().containsKey(header))
			.map(Map.Entry::getKey)
			.toList();
	}

	@Test
	void theDefaultPolicyReplaysWhatItStores() throws NoSuchMethodException {
		Operation operation = customize(ResponseStoragePolicy.DEFAULT, DEFAULTS);
		assertThat(replayed(operation, "Idempotent-Replayed")).containsExactly("200", "400", "default");
		Map<?, ?> extension = (Map<?, ?>) operation.getExtensions().get(IdempotencyOperationCustomizer.EXTENSION);
		assertThat(extension.get("stored-statuses")).isEqualTo(List.of("2xx", "3xx", "4xx"));
		assertThat(extension.get("not-stored-statuses")).isEqualTo(List.of("408", "425", "429"));
		assertThat(operation.getParameters().get(0).getDescription())
			.contains("if its status is stored (2xx, 3xx, 4xx except 408, 425, 429)");
	}

	@Test
	void aConfiguredPolicyAndHeaderAreDescribed() throws NoSuchMethodException {
		IdempotencySettings settings = new IdempotencySettings(DEFAULTS.keyHeader(), DEFAULTS.keyHeaderAliases(), false,
				DEFAULTS.responseTtl(), DEFAULTS.lockTtl(), DEFAULTS.maxResponseSize(), DEFAULTS.maxRequestSize(),
				DEFAULTS.excludedHeaders(), DEFAULTS.conflictRetryAfter(), DEFAULTS.conflictWaitTimeout(), false,
				DEFAULTS.storeFailureRetryAfter(), "X-Replayed");
		Operation operation = customize(ResponseStoragePolicy.of(List.of("2xx", "5xx"), List.of()), settings);
		assertThat(replayed(operation, "X-Replayed")).containsExactly("200", "500", "default");
		assertThat(replayed(operation, "Idempotent-Replayed")).isEmpty();
		Map<?, ?> extension = (Map<?, ?>) operation.getExtensions().get(IdempotencyOperationCustomizer.EXTENSION);
		assertThat(extension.get("stored-statuses")).isEqualTo(List.of("2xx", "5xx"));
	}

	static class Orders {

		@PostMapping("/orders")
		@Idempotent
		String create() {
			return "created";
		}

	}

}
