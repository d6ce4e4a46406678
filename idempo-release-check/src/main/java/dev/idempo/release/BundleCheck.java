package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Checks a release bundle, a directory in a Maven repository's layout, against what Maven
 * Central requires of every artifact: a POM with name, description, URL, licences,
 * developers and SCM (the last four may come from a parent in the bundle); for a jar, the
 * sources and Javadoc jars beside it; a GPG signature that verifies for every file; an
 * MD5 and a SHA-1 checksum that match every file. It also requires what this project
 * publishes beyond Central's rules: a CycloneDX SBOM (JSON and XML) per artifact, exactly
 * the expected artifacts, one group and one version, and every entry of the BOM in the
 * bundle.
 * <p>
 * A {@code -SNAPSHOT} version is checked in its timestamped layout, with a notice:
 * Central accepts no snapshot in a release bundle, so a release sets a release version
 * first.
 *
 * @author idempo
 */
public final class BundleCheck {

	private static final Set<String> DERIVED_SUFFIXES = Set.of(".asc", ".md5", ".sha1", ".sha256", ".sha512");

	private final Path bundle;

	private final String groupId;

	private final String version;

	private final List<String> artifactIds;

	private final Signatures signatures;

	/**
	 * Creates a check of one bundle.
	 * @param bundle the bundle's root directory (the one that holds {@code dev/})
	 * @param groupId the group every artifact must have
	 * @param version the version every artifact must have
	 * @param artifactIds the artifacts the bundle must have, and no others
	 * @param signatures how signatures are verified
	 */
	public BundleCheck(Path bundle, String groupId, String version, List<String> artifactIds, Signatures signatures) {
		this.bundle = bundle;
		this.groupId = groupId;
		this.version = version;
		this.artifactIds = List.copyOf(artifactIds);
		this.signatures = signatures;
	}

	/**
	 * Checks the bundle in {@code args[0]} for group {@code args[1]}, version
	 * {@code args[2]} and the comma-separated artifacts {@code args[3]}, verifying
	 * signatures with the {@code gpg} on the path and the keyring of the
	 * {@code gpg.homedir} system property if it is not blank, else gpg's own
	 * ({@code GNUPGHOME}, else {@code ~/.gnupg}).
	 * @param args the bundle, the group, the version and the artifacts
	 * @throws IOException if the bundle cannot be read
	 * @throws IllegalStateException if the bundle lacks anything, with every problem
	 * found
	 */
	public static void main(String[] args) throws IOException {
		String home = System.getProperty("gpg.homedir", "");
		run(args, new Signatures(home.isBlank() ? null : Path.of(home)));
	}

	static void run(String[] args, Signatures signatures) throws IOException {
		if (args.length != 4) {
			throw new IllegalArgumentException("Usage: BundleCheck <bundle> <groupId> <version> <artifactId,...>");
		}
		List<String> artifactIds = Arrays.stream(args[3].split(",")).map(String::trim).toList();
		List<String> problems = new BundleCheck(Path.of(args[0]), args[1], args[2], artifactIds, signatures).check();
		if (!problems.isEmpty()) {
			throw new IllegalStateException("The release bundle in " + args[0]
					+ " is not what Maven Central requires:\n  " + String.join("\n  ", problems));
		}
		System.out.println("Release bundle in " + args[0] + ": " + artifactIds.size() + " artifacts of " + args[1] + " "
				+ args[2] + " have every file, signature, checksum and POM element Maven Central requires");
		if (args[2].endsWith("-SNAPSHOT")) {
			System.out.println("Notice: " + args[2] + " is a snapshot, which Central refuses in a release bundle; "
					+ "a release sets a release version first (see CONTRIBUTING.md, \"Releasing\")");
		}
	}

	/**
	 * Checks the bundle.
	 * @return every problem found, empty if the bundle is complete
	 * @throws IOException if the bundle cannot be read
	 */
	public List<String> check() throws IOException {
		List<String> problems = new ArrayList<>();
		Path groupDirectory = this.bundle.resolve(this.groupId.replace('.', '/'));
		if (!Files.isDirectory(groupDirectory)) {
			problems.add("no directory for group " + this.groupId + ": " + groupDirectory);
			return problems;
		}
		for (String unexpected : unexpectedArtifacts(groupDirectory)) {
			problems.add(unexpected + ": not an artifact that is published");
		}
		for (String artifactId : this.artifactIds) {
			Path directory = groupDirectory.resolve(artifactId).resolve(this.version);
			if (!Files.isDirectory(directory)) {
				problems.add(artifactId + ": no " + this.version + " in the bundle");
				continue;
			}
			new ArtifactCheck(this, artifactId, directory, problems).run();
		}
		return problems;
	}

	private Set<String> unexpectedArtifacts(Path groupDirectory) throws IOException {
		Set<String> unexpected = new TreeSet<>();
		try (Stream<Path> children = Files.list(groupDirectory)) {
			children.filter(Files::isDirectory)
				.map((child) -> child.getFileName().toString())
				.filter((name) -> !this.artifactIds.contains(name))
				.forEach(unexpected::add);
		}
		return unexpected;
	}

	Path bundle() {
		return this.bundle;
	}

	String groupId() {
		return this.groupId;
	}

	String version() {
		return this.version;
	}

	List<String> artifactIds() {
		return this.artifactIds;
	}

	Signatures signatures() {
		return this.signatures;
	}

	static boolean isDerived(String fileName) {
		return fileName.startsWith("maven-metadata")
				|| DERIVED_SUFFIXES.stream().anyMatch((suffix) -> fileName.endsWith(suffix));
	}

}
