package dev.idempo.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every page of the documentation (the README, the guide in {@code docs/} and
 * CONTRIBUTING.md) links only to files and sections that exist, and names only properties
 * that the configuration metadata has (or meters and observations the code names).
 */
class DocumentationLinksTests {

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern PROPERTY = Pattern.compile("`(idempo\\.[a-z0-9.-]*[a-z0-9])(?:=[^`]*)?`");

	private static final Pattern LITERAL = Pattern.compile("\"(idempo\\.[a-z0-9.-]*[a-z0-9])\"");

	private final DocumentationSnippets docs = DocumentationSnippets.ofRepository();

	@Test
	void everyLinkBetweenPagesReachesAFileAndASection() throws IOException {
		List<String> broken = new ArrayList<>();
		int links = 0;
		for (Path page : pages()) {
			Path file = this.docs.root().resolve(page);
			for (String target : matches(LINK, prose(Files.readString(file)))) {
				if (target.startsWith("http://") || target.startsWith("https://") || target.startsWith("mailto:")) {
					continue;
				}
				links++;
				int hash = target.indexOf('#');
				String path = (hash < 0) ? target : target.substring(0, hash);
				Path linked = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
				if (!Files.exists(linked)) {
					broken.add(page + ": " + target + " (no such file)");
				}
				else if (hash >= 0 && !anchors(Files.readString(linked)).contains(target.substring(hash + 1))) {
					broken.add(page + ": " + target + " (no such section)");
				}
			}
		}
		assertThat(links).as("links checked").isGreaterThan(30);
		assertThat(broken).as("broken links").isEmpty();
	}

	@Test
	void everyPropertyNamedIsInTheConfigurationMetadata() throws IOException {
		Map<String, String> metadata = IdempoMetadata.properties();
		Set<String> namedInCode = literalsOfTheMainSources();
		List<String> unknown = new ArrayList<>();
		int names = 0;
		for (Path page : pages()) {
			for (String name : matches(PROPERTY, Files.readString(this.docs.root().resolve(page)))) {
				names++;
				boolean property = metadata.containsKey(name)
						|| metadata.keySet().stream().anyMatch((key) -> key.startsWith(name + "."));
				if (!property && !namedInCode.contains(name)) {
					unknown.add(page + ": " + name);
				}
			}
		}
		assertThat(names).as("properties named").isGreaterThan(50);
		assertThat(unknown).as("names that are neither a property nor a meter or observation of the code").isEmpty();
	}

	@Test
	void findsBrokenAnchorsTheWayGitHubNamesSections() {
		assertThat(anchors("# Stores\n## The `idempo` Actuator endpoint\n```\n# not a heading\n```\n"))
			.containsExactlyInAnyOrder("stores", "the-idempo-actuator-endpoint");
		assertThat(matches(LINK, prose("[a](x.md#y)\n```\n[b](in-code.md)\n```\n"))).containsExactly("x.md#y");
	}

	private List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>(this.docs.pages());
		pages.add(Path.of("CONTRIBUTING.md"));
		assertThat(pages).contains(Path.of("README.md"));
		assertThat(pages.stream().filter((page) -> page.startsWith("docs"))).as("pages of the guide")
			.hasSizeGreaterThan(5);
		return pages;
	}

	private Set<String> literalsOfTheMainSources() throws IOException {
		Set<String> literals = new HashSet<>();
		// every module's main sources: the meters are named in the library modules
		try (Stream<Path> modules = Files.list(this.docs.root())) {
			for (Path module : modules.filter((path) -> path.getFileName().toString().startsWith("idempo-")).toList()) {
				Path sources = module.resolve("src/main/java");
				if (Files.isDirectory(sources)) {
					try (Stream<Path> files = Files.walk(sources)) {
						for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
							literals.addAll(matches(LITERAL, Files.readString(file)));
						}
					}
				}
			}
		}
		return literals;
	}

	/** The text outside fenced code blocks. */
	private static String prose(String text) {
		StringBuilder prose = new StringBuilder();
		boolean fenced = false;
		for (String line : text.split("\n", -1)) {
			if (line.strip().startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			if (!fenced) {
				prose.append(line).append('\n');
			}
		}
		return prose.toString();
	}

	private static Set<String> anchors(String text) {
		Set<String> anchors = new HashSet<>();
		for (String line : prose(text).split("\n")) {
			if (line.startsWith("#")) {
				anchors.add(line.replaceFirst("^#+\\s*", "")
					.toLowerCase(Locale.ROOT)
					.replaceAll("[^a-z0-9 _-]", "")
					.replace(' ', '-'));
			}
		}
		return anchors;
	}

	private static List<String> matches(Pattern pattern, String text) {
		List<String> found = new ArrayList<>();
		Matcher matcher = pattern.matcher(text);
		while (matcher.find()) {
			found.add(matcher.group(1));
		}
		return found;
	}

}
