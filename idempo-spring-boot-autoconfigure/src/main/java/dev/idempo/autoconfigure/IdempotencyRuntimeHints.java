package dev.idempo.autoconfigure;

import org.jspecify.annotations.Nullable;

import dev.idempo.autoconfigure.actuate.IdempotencyEndpointAutoConfiguration;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The resources idempo reads at run time, for native images and AOT-processed
 * applications: the Redis store's Lua scripts and the SQL stores' schema scripts; and the
 * caller scope resolver types, which the Actuator endpoint's auto-configuration looks up
 * by name.
 *
 * @author idempo
 */
class IdempotencyRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources()
			.registerPattern("dev/idempo/store/redis/*.lua")
			.registerPattern("dev/idempo/store/jdbc/schema-*.sql");
		IdempotencyEndpointAutoConfiguration.resolverTypes()
			.forEach((type) -> hints.reflection().registerTypeIfPresent(classLoader, type));
	}

}
