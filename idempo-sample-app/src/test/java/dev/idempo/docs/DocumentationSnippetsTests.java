package dev.idempo.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code ```java} block of the README and of {@code docs/**}{@code /*.md} is a copy
 * of a region of a source the build compiles ({@link DocumentationSnippets}). Run with
 * {@code -Ddocs.snippets.update=true} to copy the regions into the pages instead.
 */
class DocumentationSnippetsTests {

	private static final String SOURCE = "idempo-sample-app/src/test/java/dev/idempo/docs/GettingStartedController.java";

	private final DocumentationSnippets snippets = DocumentationSnippets.ofRepository();

	@Test
	void everyJavaBlockOfTheDocumentationIsItsSourceRegion() throws Exception {
		boolean update = Boolean.getBoolean("docs.snippets.update");
		List<String> problems = new ArrayList<>();
		for (Path page : this.snippets.pages()) {
			Path file = this.snippets.root().resolve(page);
			DocumentationSnippets.Result result = this.snippets.check(page.toString(),
					DocumentationSnippets.read(file));
			if (update && !result.corrected().equals(DocumentationSnippets.read(file))) {
				Files.writeString(file, result.corrected());
				result = this.snippets.check(page.toString(), result.corrected());
			}
			problems.addAll(result.problems());
		}
		assertThat(problems)
			.withFailMessage(
					"Documentation snippets out of step with their sources "
							+ "(-Ddocs.snippets.update=true copies the regions into the pages):%n%n%s",
					String.join(System.lineSeparator() + System.lineSeparator(), problems))
			.isEmpty();
	}

	@Test
	void aBlockThatDriftedFromItsRegionIsReportedWithTheText() {
		String page = """
				Intro.

				<!-- snippet: %s#intro-handler -->
				```java
				@PostMapping("/payments")
				@Idempotent(ttl = "12h")
				ResponseEntity<Payment> create(@RequestBody PaymentRequest request) { ... }
				```
				""".formatted(SOURCE);
		DocumentationSnippets.Result result = this.snippets.check("page.md", page);
		assertThat(result.problems()).singleElement()
			.asString()
			.startsWith("page.md:4: the ```java block differs from " + SOURCE + "#intro-handler")
			.contains("@Idempotent(ttl = \"24h\")");
		assertThat(this.snippets.check("page.md", result.corrected()).problems()).isEmpty();
	}

	@Test
	void regionsAreDedentedWithTabsAsSpacesAndJoined() {
		assertThat(this.snippets.regions(SOURCE, "intro-import,intro-handler")).isEqualTo("""
				import dev.idempo.Idempotent;

				@PostMapping("/payments")
				@Idempotent(ttl = "24h")
				ResponseEntity<Payment> create(@RequestBody PaymentRequest request) {
				    Payment payment = this.payments.save(request);
				    return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
				}""");
	}

	@Test
	void aBlockWithoutSourceOrWithAMissingRegionIsReported() {
		String page = """
				```java
				class Uncompiled {}
				```

				<!-- snippet: %s#no-such-tag -->
				```java
				x
				```

				<!-- snippet: README.md/src/main/java/Nowhere.java#tag -->
				```java
				y
				```

				<!-- snippet: %s#intro-handler -->
				```xml
				<z/>
				```
				""".formatted(SOURCE, SOURCE);
		assertThat(this.snippets.check("page.md", page).problems()).satisfiesExactly(
				(problem) -> assertThat(problem).startsWith("page.md:1: a ```java block without"),
				(problem) -> assertThat(problem).startsWith("page.md:5: " + SOURCE + " has no region"),
				(problem) -> assertThat(problem).startsWith("page.md:10: README.md/src/main/java/Nowhere.java is not a "
						+ "Java source of a module the build compiles"),
				(problem) -> assertThat(problem)
					.startsWith("page.md:15: a snippet marker must be followed by a ```java block"));
	}

	@Test
	void pagesAreTheReadmeAndTheGuide() {
		assertThat(this.snippets.pages()).first().isEqualTo(Path.of("README.md"));
		assertThat(this.snippets.pages()).allMatch((page) -> page.toString().endsWith(".md"))
			.allMatch((page) -> page.equals(Path.of("README.md")) || page.startsWith("docs"));
	}

}
