package dev.idempo.web.testapp;

import java.util.Map;

import dev.idempo.Idempotent;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@link Idempotent} on the class, overridden on one method.
 *
 * @author idempo
 */
@RestController
@RequestMapping("/class-level")
@Idempotent(required = true)
public class ClassLevelController {

	private final Executions executions;

	public ClassLevelController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/inherits")
	Map<String, Object> inherits() {
		return Map.of("execution", this.executions.increment("class-inherits"));
	}

	@PostMapping("/overrides")
	@Idempotent(cacheResponse = false)
	Map<String, Object> overrides() {
		return Map.of("execution", this.executions.increment("class-overrides"));
	}

}
