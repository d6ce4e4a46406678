package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.ZipFile;

import org.w3c.dom.Element;

/**
 * Checks one artifact's directory of a bundle: its files, their signatures and checksums,
 * and its POM.
 *
 * @author idempo
 */
final class ArtifactCheck {

	private static final Map<String, String> CHECKSUMS = Map.of(".md5", "MD5", ".sha1", "SHA-1");

	private final BundleCheck bundle;

	private final String artifactId;

	private final Path directory;

	private final List<String> problems;

	ArtifactCheck(BundleCheck bundle, String artifactId, Path directory, List<String> problems) {
		this.bundle = bundle;
		this.artifactId = artifactId;
		this.directory = directory;
		this.problems = problems;
	}

	void run() throws IOException {
		Map<String, Path> files = files();
		Path pomFile = files.get(".pom");
		if (pomFile == null) {
			problem("no .pom");
			return;
		}
		Pom pom = Pom.read(pomFile);
		new PomCheck(this.bundle, this.artifactId, pom, this.problems).run();
		for (String required : requiredFiles(pom.packaging())) {
			if (!files.containsKey(required)) {
				problem("no " + required);
			}
		}
		for (Map.Entry<String, Path> file : files.entrySet()) {
			checkArchive(file.getKey(), file.getValue());
			checkSignature(file.getValue());
			checkChecksums(file.getValue());
		}
		checkBomEntries(pom);
	}

	/**
	 * The artifact's files of this version (the newest build of a snapshot), by what
	 * follows the version in their names: {@code .pom}, {@code .jar},
	 * {@code -sources.jar}...
	 */
	private Map<String, Path> files() throws IOException {
		String prefix = this.artifactId + "-" + fileVersion();
		Map<String, Path> files = new TreeMap<>();
		try (Stream<Path> children = Files.list(this.directory)) {
			children.filter(Files::isRegularFile).forEach((file) -> {
				String name = file.getFileName().toString();
				if (name.startsWith(prefix) && !BundleCheck.isDerived(name)) {
					String rest = name.substring(prefix.length());
					if (rest.startsWith(".") || rest.startsWith("-")) {
						files.put(rest, file);
					}
				}
			});
		}
		return files;
	}

	/**
	 * The version in the file names: the version itself, or for a snapshot the newest
	 * build's timestamp and number that the deployment recorded in
	 * {@code maven-metadata.xml}.
	 */
	private String fileVersion() throws IOException {
		String version = this.bundle.version();
		if (!version.endsWith("-SNAPSHOT")) {
			return version;
		}
		Path metadata = this.directory.resolve("maven-metadata.xml");
		if (!Files.isRegularFile(metadata)) {
			problem("no maven-metadata.xml for snapshot " + version);
			return version;
		}
		Element snapshot = Pom.child(Pom.parse(metadata).getDocumentElement(), "versioning", "snapshot");
		String timestamp = Pom.text(snapshot, "timestamp");
		String buildNumber = Pom.text(snapshot, "buildNumber");
		if (timestamp == null || buildNumber == null) {
			return version;
		}
		return version.substring(0, version.length() - "SNAPSHOT".length()) + timestamp + "-" + buildNumber;
	}

	private static List<String> requiredFiles(String packaging) {
		if (packaging.equals("pom")) {
			return List.of(".pom", "-cyclonedx.json", "-cyclonedx.xml");
		}
		return List.of(".pom", "." + packaging, "-sources.jar", "-javadoc.jar", "-cyclonedx.json", "-cyclonedx.xml");
	}

	private void checkArchive(String suffix, Path file) {
		if (!suffix.endsWith(".jar")) {
			return;
		}
		try (ZipFile zip = new ZipFile(file.toFile())) {
			if (zip.size() == 0) {
				problem(file.getFileName() + " is empty");
			}
		}
		catch (IOException ex) {
			problem(file.getFileName() + " is not a jar: " + ex.getMessage());
		}
	}

	private void checkSignature(Path file) throws IOException {
		Path signature = file.resolveSibling(file.getFileName() + ".asc");
		if (!Files.isRegularFile(signature)) {
			problem("no signature " + signature.getFileName());
		}
		else if (!this.bundle.signatures().verify(signature, file)) {
			problem(signature.getFileName() + " does not verify against " + file.getFileName());
		}
	}

	private void checkChecksums(Path file) throws IOException {
		for (Map.Entry<String, String> checksum : CHECKSUMS.entrySet()) {
			Path checksumFile = file.resolveSibling(file.getFileName() + checksum.getKey());
			if (!Files.isRegularFile(checksumFile)) {
				problem("no checksum " + checksumFile.getFileName());
				continue;
			}
			String expected = Files.readString(checksumFile).trim().split("\\s+")[0];
			if (!expected.equalsIgnoreCase(digest(file, checksum.getValue()))) {
				problem(checksumFile.getFileName() + " does not match " + file.getFileName());
			}
		}
	}

	private static String digest(Path file, String algorithm) throws IOException {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(Files.readAllBytes(file)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A BOM must only name artifacts of this bundle, at this version.
	 */
	private void checkBomEntries(Pom pom) {
		for (Element dependency : pom.managedDependencies()) {
			String group = Pom.text(dependency, "groupId");
			String artifact = Pom.text(dependency, "artifactId");
			if (this.bundle.groupId().equals(group) && !this.bundle.artifactIds().contains(artifact)) {
				problem("manages " + artifact + ", which the bundle does not have");
			}
		}
	}

	private void problem(String problem) {
		this.problems.add(this.artifactId + ": " + problem);
	}

}
