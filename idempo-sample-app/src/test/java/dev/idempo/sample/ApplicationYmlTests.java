package dev.idempo.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.idempo.docs.IdempoMetadata;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's {@code application.yml} says it lists every idempo property: this holds it
 * to the configuration metadata idempo ships (the generated
 * {@code spring-configuration-metadata.json} and
 * {@code additional-spring-configuration-metadata.json}), so that a property added
 * without its line in the yml fails the build, naming it.
 * <p>
 * A property with a computed default is listed as a comment, {@code # name: how}, at its
 * place in the tree; such comments count as listed.
 */
class ApplicationYmlTests {

	private static final Path YML = Path.of("src/main/resources/application.yml");

	private static final String PREFIX = "idempo.";

	private static final Pattern KEY = Pattern.compile("^( *)(# )?([a-z][a-z0-9-]*):(?: (.*))?$");

	@Test
	void listsEveryIdempoPropertyOfTheMetadataAndNoOther() throws IOException {
		Map<String, String> metadata = IdempoMetadata.properties();
		assertThat(metadata).as("idempo's configuration metadata on the class path").containsKey("idempo.enabled");
		String yml = Files.readString(YML);
		List<String> missing = missing(yml, metadata);
		assertThat(missing)
			.withFailMessage(
					"%s lacks these properties of idempo's configuration metadata; add each at its place in the tree, "
							+ "with its default, or as a comment '# name: how' when the default is computed:%n  %s",
					YML, String.join(System.lineSeparator() + "  ", missing))
			.isEmpty();
		List<String> unknown = unknown(yml, metadata);
		assertThat(unknown).withFailMessage(
				"%s lists properties that idempo's configuration metadata does not have (renamed or removed?):%n  %s",
				YML, String.join(System.lineSeparator() + "  ", unknown))
			.isEmpty();
	}

	@Test
	void aPropertyMissingFromTheYmlIsNamedWithItsDefault() {
		String yml = """
				idempo:
				  enabled: true
				  store:
				    type: memory
				    # network-timeout: computed
				""";
		Map<String, String> metadata = Map.of("idempo.enabled", "true", "idempo.store.type", "memory",
				"idempo.store.network-timeout", "", "idempo.client.max-attempts", "3", "idempo.client.enabled",
				"false");
		assertThat(missing(yml, metadata)).containsExactly("idempo.client.enabled: false",
				"idempo.client.max-attempts: 3");
		assertThat(unknown(yml + "  key-hedaer: X\n", metadata)).containsExactly("idempo.key-hedaer");
	}

	/**
	 * The metadata's properties that the yml does not list, each with its default.
	 */
	static List<String> missing(String yml, Map<String, String> metadata) {
		Set<String> listed = listed(yml);
		List<String> missing = new ArrayList<>();
		metadata.forEach((name, defaultValue) -> {
			if (!listed.contains(name)) {
				missing.add(defaultValue.isEmpty() ? name + " (no default)" : name + ": " + defaultValue);
			}
		});
		Collections.sort(missing);
		return missing;
	}

	/**
	 * The yml's idempo properties that are not in the metadata, nor inside a map-valued
	 * property of it.
	 */
	static List<String> unknown(String yml, Map<String, String> metadata) {
		List<String> unknown = new ArrayList<>();
		for (String name : listed(yml)) {
			if (name.startsWith(PREFIX) && metadata.keySet()
				.stream()
				.noneMatch((known) -> name.equals(known) || name.startsWith(known + ".")
						|| known.startsWith(name + "."))) {
				unknown.add(name);
			}
		}
		return unknown;
	}

	/**
	 * Every key path of the yml, parents included, and the commented-out keys: enough
	 * YAML for block mappings, which is all the sample's file uses.
	 */
	static Set<String> listed(String yml) {
		Set<String> paths = new TreeSet<>();
		Deque<Map.Entry<Integer, String>> parents = new ArrayDeque<>();
		for (String line : yml.split("\n")) {
			Matcher key = KEY.matcher(line.stripTrailing());
			if (!key.matches()) {
				continue;
			}
			int indent = key.group(1).length();
			while (!parents.isEmpty() && parents.peek().getKey() >= indent) {
				parents.pop();
			}
			StringBuilder path = new StringBuilder();
			parents.descendingIterator().forEachRemaining((parent) -> path.append(parent.getValue()).append('.'));
			path.append(key.group(3));
			paths.add(path.toString());
			boolean comment = key.group(2) != null;
			String value = key.group(4);
			if (!comment && (value == null || value.isBlank() || value.startsWith("#"))) {
				parents.push(Map.entry(indent, key.group(3)));
			}
		}
		return paths;
	}

}
