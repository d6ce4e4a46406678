package dev.idempo.docs;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The production checklist names real properties and links to sections that exist, on
 * whichever page of the documentation it is.
 */
class ProductionChecklistTests {

	private static final String HEADING = "# Production checklist";

	private static final Pattern PROPERTY = Pattern.compile("`(idempo\\.[a-z0-9.-]*[a-z0-9])(?:=[^`]*)?`");

	private static final Pattern LINK = Pattern.compile("\\]\\(((?:[a-z0-9./-]+\\.md)?#[^)]+)\\)");

	private final DocumentationSnippets docs = DocumentationSnippets.ofRepository();

	@Test
	void namesRealPropertiesAndLinksToExistingSections() throws Exception {
		Path page = this.docs.pages()
			.stream()
			.filter((candidate) -> DocumentationSnippets.read(this.docs.root().resolve(candidate)).contains(HEADING))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No page has a '" + HEADING + "' section"));
		String text = DocumentationSnippets.read(this.docs.root().resolve(page));
		String checklist = section(text);
		Map<String, String> metadata = IdempoMetadata.properties();
		List<String> properties = matches(PROPERTY, checklist);
		assertThat(properties).as("properties the checklist names").hasSizeGreaterThan(5);
		assertThat(properties).as("properties of the checklist missing from the configuration metadata")
			.allMatch(metadata::containsKey);
		List<String> links = matches(LINK, checklist);
		assertThat(links).as("sections the checklist links to").hasSizeGreaterThan(5);
		for (String link : links) {
			int hash = link.indexOf('#');
			Path target = (hash == 0) ? page : page.resolveSibling(link.substring(0, hash));
			String linked = DocumentationSnippets.read(this.docs.root().resolve(target).normalize());
			assertThat(anchors(linked)).as("sections of %s the checklist links to", target)
				.contains(link.substring(hash + 1));
		}
	}

	@Test
	void anchorsAreGitHubs() {
		assertThat(anchors("## The `idempo` Actuator endpoint\n#### Connection discipline: lock sessions\n"
				+ "### `@Idempotent`\n"))
			.containsExactlyInAnyOrder("the-idempo-actuator-endpoint", "connection-discipline-lock-sessions",
					"idempotent");
	}

	private static String section(String text) {
		int start = text.indexOf(HEADING);
		int end = text.indexOf("\n# ", start + HEADING.length());
		return text.substring(start, (end < 0) ? text.length() : end);
	}

	private static List<String> matches(Pattern pattern, String text) {
		List<String> found = new ArrayList<>();
		Matcher matcher = pattern.matcher(text);
		while (matcher.find()) {
			found.add(matcher.group(1));
		}
		return found;
	}

	private static Set<String> anchors(String text) {
		return text.lines()
			.filter((line) -> line.startsWith("#"))
			.map((line) -> line.replaceFirst("^#+\\s*", "")
				.toLowerCase(Locale.ROOT)
				.replaceAll("[^a-z0-9 _-]", "")
				.replace(' ', '-'))
			.collect(Collectors.toSet());
	}

}
