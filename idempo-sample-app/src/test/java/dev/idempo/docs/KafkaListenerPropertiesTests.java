package dev.idempo.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @KafkaListener} that the guide shows without a {@code groupId} is followed by
 * the properties it needs to start: Spring Kafka refuses a container without a consumer
 * group, and a placeholder of the listener that no property defines fails the start-up.
 */
class KafkaListenerPropertiesTests {

	private static final Pattern BLOCK = Pattern.compile("^```(\\w+)\\n(.*?)^```$", Pattern.MULTILINE | Pattern.DOTALL);

	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}:]+)}");

	private final DocumentationSnippets docs = DocumentationSnippets.ofRepository();

	@Test
	void everyListenerWithoutAGroupIsFollowedByThePropertiesItNeeds() throws IOException {
		List<String> listeners = new ArrayList<>();
		for (Path page : this.docs.pages()) {
			String markdown = Files.readString(this.docs.root().resolve(page));
			List<MatchResult> blocks = BLOCK.matcher(markdown)
				.results()
				.map((block) -> new MatchResult(block.group(1), block.group(2)))
				.toList();
			for (int i = 0; i < blocks.size(); i++) {
				MatchResult block = blocks.get(i);
				if (block.language().equals("java") && block.text().contains("@KafkaListener(")
						&& !block.text().contains("groupId")) {
					listeners.add(page + ": " + firstLine(block.text(), "@KafkaListener("));
					assertThat(i + 1).as("a ```yaml block after the listener in %s", page).isLessThan(blocks.size());
					MatchResult properties = blocks.get(i + 1);
					assertThat(properties.language()).as("the block after the listener in %s", page).isEqualTo("yaml");
					Map<String, Object> yaml = new Yaml().load(properties.text());
					assertThat(lookUp(yaml, "spring.kafka.consumer.group-id"))
						.as("spring.kafka.consumer.group-id in %s", page)
						.isNotNull();
					Matcher placeholder = PLACEHOLDER.matcher(block.text());
					while (placeholder.find()) {
						assertThat(lookUp(yaml, placeholder.group(1))).as("%s in %s", placeholder.group(1), page)
							.isNotNull();
					}
				}
			}
		}
		assertThat(listeners).as("the guide's Kafka listeners without a groupId").isNotEmpty();
	}

	private static String firstLine(String text, String containing) {
		return text.lines().filter((line) -> line.contains(containing)).findFirst().orElseThrow().strip();
	}

	@SuppressWarnings("unchecked")
	private static Object lookUp(Map<String, Object> yaml, String property) {
		Object value = yaml;
		for (String name : property.split("\\.")) {
			if (!(value instanceof Map<?, ?> map)) {
				return null;
			}
			value = ((Map<String, Object>) map).get(name);
		}
		return value;
	}

	private record MatchResult(String language, String text) {
	}

}
