package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.w3c.dom.Element;

/**
 * Checks a POM for the elements Maven Central requires: name and description of its own;
 * URL, licences, developers and SCM of its own or from a parent POM in the bundle (as
 * Maven inherits them); and its coordinates.
 *
 * @author idempo
 */
final class PomCheck {

	/**
	 * Properties that only a flattened POM resolves: a published POM with them names a
	 * version no one can resolve.
	 */
	private static final List<String> CI_FRIENDLY_PROPERTIES = List.of("${revision}", "${sha1}", "${changelist}");

	private final BundleCheck bundle;

	private final String artifactId;

	private final Pom pom;

	private final List<String> problems;

	PomCheck(BundleCheck bundle, String artifactId, Pom pom, List<String> problems) {
		this.bundle = bundle;
		this.artifactId = artifactId;
		this.pom = pom;
		this.problems = problems;
	}

	void run() throws IOException {
		checkCoordinates();
		requireOwn("name");
		requireOwn("description");
		requireInherited("url", (pom) -> pom.get("url") != null);
		requireInherited("licenses (a license with name and url)",
				(pom) -> pom.children("licenses", "license")
					.stream()
					.anyMatch((license) -> has(license, "name") && has(license, "url")));
		requireInherited("developers (a developer with id or name)",
				(pom) -> pom.children("developers", "developer")
					.stream()
					.anyMatch((developer) -> has(developer, "id") || has(developer, "name")));
		requireInherited("scm (with url and connection)",
				(pom) -> pom.get("scm", "url") != null && pom.get("scm", "connection") != null);
	}

	private void checkCoordinates() {
		expect("artifactId", this.pom.get("artifactId"), this.artifactId);
		expect("groupId", this.pom.groupId(), this.bundle.groupId());
		expect("version", this.pom.version(), this.bundle.version());
		String parentVersion = this.pom.get("parent", "version");
		if (parentVersion != null && parentVersion.contains("${")) {
			problem("parent version " + parentVersion + " is not literal");
		}
		for (String property : CI_FRIENDLY_PROPERTIES) {
			if (this.pom.text().contains(property)) {
				problem("uses " + property + ", which only a flattened POM resolves");
			}
		}
	}

	private void expect(String element, @Nullable String actual, String expected) {
		if (!expected.equals(actual)) {
			problem(element + " is " + actual + ", not " + expected);
		}
	}

	private void requireOwn(String element) {
		if (this.pom.get(element) == null) {
			problem("the POM has no " + element);
		}
	}

	/**
	 * Requires an element of the POM or of a parent in the bundle: a consumer's Maven
	 * reads the parent from the same repository.
	 */
	private void requireInherited(String what, Predicate<Pom> present) throws IOException {
		Pom current = this.pom;
		while (current != null) {
			if (present.test(current)) {
				return;
			}
			current = parent(current);
		}
		problem("neither the POM nor a parent in the bundle has " + what);
	}

	private @Nullable Pom parent(Pom child) throws IOException {
		String groupId = child.get("parent", "groupId");
		String artifactId = child.get("parent", "artifactId");
		String version = child.get("parent", "version");
		if (groupId == null || artifactId == null || version == null || !groupId.equals(this.bundle.groupId())) {
			return null;
		}
		Path directory = this.bundle.bundle().resolve(groupId.replace('.', '/')).resolve(artifactId).resolve(version);
		if (!Files.isDirectory(directory)) {
			problem("parent " + artifactId + " " + version + " is not in the bundle");
			return null;
		}
		try (Stream<Path> files = Files.list(directory)) {
			Path parentPom = files.filter((file) -> file.getFileName().toString().startsWith(artifactId + "-"))
				.filter((file) -> file.getFileName().toString().endsWith(".pom"))
				.sorted()
				.reduce((first, second) -> second)
				.orElse(null);
			return (parentPom != null) ? Pom.read(parentPom) : null;
		}
	}

	private static boolean has(Element element, String name) {
		return Pom.text(element, name) != null;
	}

	private void problem(String problem) {
		this.problems.add(this.artifactId + ": " + problem);
	}

}
