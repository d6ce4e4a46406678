package dev.idempo.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.idempo.autoconfigure.actuate.IdempotencyHealthAutoConfiguration;
import dev.idempo.autoconfigure.openapi.IdempotencyOpenApiAutoConfiguration;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What Spring Boot's build conventions put in the jar: configuration metadata with a
 * default for every property that has one and value hints for the enumerated ones,
 * auto-configuration metadata (so that Boot can skip idempo's auto-configurations without
 * loading their classes), and the runtime hints of the resources read at run time.
 *
 * @author idempo
 */
class BuildConventionsTests {

	/** Properties whose default is computed, not a value. */
	private static final Set<String> WITHOUT_DEFAULT = Set.of("idempo.store.jdbc.platform", "idempo.max-buffered-size",
			"idempo.store.jdbc.network-timeout", "idempo.routes");

	@Test
	void everyPropertyIsDescribedAndHasItsDefault() throws IOException {
		JsonNode metadata = metadata();
		List<String> missing = new ArrayList<>();
		for (JsonNode property : metadata.path("properties")) {
			String name = property.path("name").asString();
			if (!name.startsWith("idempo.")) {
				continue;
			}
			if (!property.has("description")) {
				missing.add(name + " (description)");
			}
			if (!property.has("defaultValue") && !WITHOUT_DEFAULT.contains(name)) {
				missing.add(name + " (default)");
			}
		}
		assertThat(missing).isEmpty();
		assertThat(metadata.path("properties").size()).isGreaterThan(30);
	}

	@Test
	void storeTypeHasADescribedHintPerStore() throws IOException {
		List<String> values = new ArrayList<>();
		for (JsonNode hint : metadata().path("hints")) {
			if ("idempo.store.type".equals(hint.path("name").asString())) {
				for (JsonNode value : hint.path("values")) {
					assertThat(value.path("description").asString()).isNotBlank();
					values.add(value.path("value").asString());
				}
			}
		}
		assertThat(values).containsExactly("memory", "redis", "postgres", "mysql");
	}

	@Test
	void autoConfigurationMetadataIsGenerated() throws IOException {
		Properties properties = new Properties();
		try (InputStream in = new ClassPathResource("META-INF/spring-autoconfigure-metadata.properties")
			.getInputStream()) {
			properties.load(in);
		}
		assertThat(properties).containsKeys(IdempotencyAutoConfiguration.class.getName(),
				IdempotencyOpenApiAutoConfiguration.class.getName() + ".ConditionalOnClass",
				IdempotencyHealthAutoConfiguration.class.getName() + ".ConditionalOnClass");
	}

	@Test
	void scriptsReadAtRunTimeHaveResourceHints() {
		RuntimeHints hints = new RuntimeHints();
		new IdempotencyRuntimeHints().registerHints(hints, getClass().getClassLoader());
		for (String resource : List.of("dev/idempo/store/redis/claim.lua", "dev/idempo/store/redis/complete.lua",
				"dev/idempo/store/redis/release.lua", "dev/idempo/store/redis/renew.lua",
				"dev/idempo/store/jdbc/schema-postgresql.sql", "dev/idempo/store/jdbc/schema-mysql.sql")) {
			assertThat(new ClassPathResource(resource).exists()).as(resource).isTrue();
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(hints);
		}
	}

	private static JsonNode metadata() throws IOException {
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			return JsonMapper.builder().build().readTree(in);
		}
	}

}
