package dev.idempo.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks the {@code ```java} blocks of the documentation (the README and every
 * {@code docs/**}{@code /*.md} page) against the source regions they are copied from.
 * <p>
 * A block is preceded by a marker naming its source, relative to the repository root:
 * <pre>
 * &lt;!-- snippet: idempo-sample-app/src/test/java/dev/idempo/sample/PaymentsTests.java#payments-tests --&gt;
 * </pre> and its text must equal that file's region between
 * {@code // tag::payments-tests[]} and {@code // end::payments-tests[]}, less the common
 * indentation, with leading tabs as four spaces. {@code #a,b} joins two regions with a
 * blank line. The file must be a Java source of a module the build compiles, so that a
 * snippet is compiled (and, where a test uses it, run) with the code it documents.
 */
final class DocumentationSnippets {

	private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+)#([A-Za-z0-9,-]+) -->$");

	private static final Pattern FENCE = Pattern.compile("^( *)```(\\S*)\\s*$");

	private static final Pattern COMPILED_SOURCE = Pattern.compile("([^/]+)/src/(main|test)/java/.+\\.java");

	private static final Pattern REGION_MARKER = Pattern.compile("^\\s*// (tag|end)::[A-Za-z0-9-]+\\[]\\s*$");

	private final Path root;

	private final Set<String> modules;

	private DocumentationSnippets(Path root) {
		this.root = root;
		this.modules = modulesOf(read(root.resolve("pom.xml")));
	}

	/**
	 * The checker for the repository around the working directory.
	 * @return the checker
	 */
	static DocumentationSnippets ofRepository() {
		Path dir = Path.of("").toAbsolutePath();
		while (dir != null
				&& !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isRegularFile(dir.resolve("README.md")))) {
			dir = dir.getParent();
		}
		if (dir == null) {
			throw new IllegalStateException(
					"No repository root (mvnw and README.md) above " + Path.of("").toAbsolutePath());
		}
		return new DocumentationSnippets(dir);
	}

	Path root() {
		return this.root;
	}

	/**
	 * The pages whose snippets are checked: README.md and docs/**.md.
	 * @return the pages, relative to the root
	 */
	List<Path> pages() {
		List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
		Path docs = this.root.resolve("docs");
		if (Files.isDirectory(docs)) {
			try (Stream<Path> files = Files.walk(docs)) {
				files.filter((file) -> file.toString().endsWith(".md"))
					.map(this.root::relativize)
					.sorted()
					.forEach(pages::add);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return pages;
	}

	/**
	 * Checks one page.
	 * @param page the page's name, for the messages
	 * @param markdown its text
	 * @return what is wrong, one message per problem, and the page with every block that
	 * has a readable source replaced by that source
	 */
	Result check(String page, String markdown) {
		List<String> problems = new ArrayList<>();
		List<String> lines = new ArrayList<>(Arrays.asList(markdown.split("\n", -1)));
		List<String> corrected = new ArrayList<>();
		String pendingMarker = null;
		int pendingLine = 0;
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			Matcher fence = FENCE.matcher(line);
			if (!fence.matches()) {
				corrected.add(line);
				if (MARKER.matcher(line.strip()).matches()) {
					if (pendingMarker != null) {
						problems
							.add(page + ":" + pendingLine + ": a snippet marker must be followed by a ```java block");
					}
					pendingMarker = line.strip();
					pendingLine = i + 1;
				}
				else if (!line.isBlank() && pendingMarker != null) {
					problems.add(page + ":" + pendingLine + ": a snippet marker must be followed by a ```java block");
					pendingMarker = null;
				}
				continue;
			}
			String indent = fence.group(1);
			int open = i;
			List<String> block = new ArrayList<>();
			int close = i + 1;
			while (close < lines.size() && !lines.get(close).equals(indent + "```")) {
				String inner = lines.get(close);
				block.add((inner.startsWith(indent) ? inner.substring(indent.length()) : inner.stripLeading())
					.stripTrailing());
				close++;
			}
			corrected.add(line);
			boolean java = fence.group(2).equals("java");
			String expected = null;
			if (java && pendingMarker == null) {
				problems.add(page + ":" + (open + 1) + ": a ```java block without a '<!-- snippet: path#tag -->' "
						+ "line above it: copy it from a region of a compiled source");
			}
			else if (!java && pendingMarker != null) {
				problems.add(page + ":" + pendingLine + ": a snippet marker must be followed by a ```java block");
			}
			else if (java) {
				Matcher marker = MARKER.matcher(pendingMarker);
				marker.matches();
				try {
					expected = regions(marker.group(1), marker.group(2));
					String actual = String.join("\n", block).strip();
					if (!actual.equals(expected)) {
						problems.add(page + ":" + (open + 1) + ": the ```java block differs from " + marker.group(1)
								+ "#" + marker.group(2) + "; it must read:\n" + expected);
					}
				}
				catch (IllegalArgumentException ex) {
					problems.add(page + ":" + pendingLine + ": " + ex.getMessage());
				}
			}
			pendingMarker = null;
			if (expected != null) {
				for (String source : expected.split("\n", -1)) {
					corrected.add(source.isEmpty() ? "" : indent + source);
				}
			}
			else {
				lines.subList(open + 1, Math.min(close, lines.size())).forEach(corrected::add);
			}
			if (close < lines.size()) {
				corrected.add(lines.get(close));
			}
			i = close;
		}
		if (pendingMarker != null) {
			problems.add(page + ":" + pendingLine + ": a snippet marker must be followed by a ```java block");
		}
		return new Result(problems, String.join("\n", corrected));
	}

	/**
	 * The text of the regions {@code tags} (comma-separated) of a source file.
	 * @param file the file, relative to the root
	 * @param tags the region names
	 * @return the regions, joined by a blank line
	 * @throws IllegalArgumentException if the file is not a compiled source, or lacks a
	 * region
	 */
	String regions(String file, String tags) {
		Matcher source = COMPILED_SOURCE.matcher(file);
		if (!source.matches() || !this.modules.contains(source.group(1))) {
			throw new IllegalArgumentException(file + " is not a Java source of a module the build compiles ("
					+ String.join(", ", this.modules) + ")");
		}
		Path path = this.root.resolve(file);
		if (!Files.isRegularFile(path)) {
			throw new IllegalArgumentException(file + " does not exist");
		}
		List<String> lines = List.of(read(path).split("\n", -1));
		List<String> texts = new ArrayList<>();
		for (String tag : tags.split(",")) {
			int start = indexOf(lines, "// tag::" + tag + "[]", 0);
			int end = (start < 0) ? -1 : indexOf(lines, "// end::" + tag + "[]", start);
			if (start < 0 || end < 0) {
				throw new IllegalArgumentException(
						file + " has no region '// tag::" + tag + "[]' ... '// end::" + tag + "[]'");
			}
			List<String> region = lines.subList(start + 1, end)
				.stream()
				.filter((line) -> !REGION_MARKER.matcher(line).matches())
				.map(DocumentationSnippets::leadingTabsAsSpaces)
				.toList();
			int common = region.stream()
				.filter((line) -> !line.isBlank())
				.mapToInt((line) -> line.length() - line.stripLeading().length())
				.min()
				.orElse(0);
			texts.add(region.stream()
				.map((line) -> line.isBlank() ? "" : line.substring(common))
				.collect(Collectors.joining("\n"))
				.strip());
		}
		return String.join("\n\n", texts);
	}

	private static int indexOf(List<String> lines, String marker, int from) {
		for (int i = from; i < lines.size(); i++) {
			if (lines.get(i).strip().equals(marker)) {
				return i;
			}
		}
		return -1;
	}

	private static String leadingTabsAsSpaces(String line) {
		int tabs = 0;
		while (tabs < line.length() && line.charAt(tabs) == '\t') {
			tabs++;
		}
		return "    ".repeat(tabs) + line.substring(tabs).stripTrailing();
	}

	private static Set<String> modulesOf(String pom) {
		// the default build's modules only, not those of a profile
		Matcher modules = Pattern.compile("(?s)<modules>(.*?)</modules>").matcher(pom);
		if (!modules.find()) {
			return Set.of();
		}
		return Pattern.compile("<module>([^<]+)</module>")
			.matcher(modules.group(1))
			.results()
			.map((match) -> match.group(1).strip())
			.collect(Collectors.toCollection(TreeSet::new));
	}

	static String read(Path path) {
		try {
			return Files.readString(path).replace("\r\n", "\n");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The outcome of checking a page.
	 *
	 * @param problems what is wrong, empty if nothing
	 * @param corrected the page with its blocks copied from their sources
	 */
	record Result(List<String> problems, String corrected) {
	}

}
