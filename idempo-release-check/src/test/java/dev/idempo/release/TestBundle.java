package dev.idempo.release;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Writes a small bundle as the release profile stages it (a parent POM and one jar
 * artifact, signed with a throwaway key in a GnuPG home of its own and checksummed), for
 * {@link BundleCheck} to check, and breaks it in one place at a time.
 *
 * @author idempo
 */
final class TestBundle {

	static final String GROUP = "dev.idempo";

	static final String VERSION = "1.0.0";

	private static final String METADATA = """
			<url>https://example.invalid/idempo</url>
			<licenses><license><name>Apache License, Version 2.0</name>
			<url>https://www.apache.org/licenses/LICENSE-2.0.txt</url></license></licenses>
			<developers><developer><id>idempo</id><name>The idempo team</name></developer></developers>
			<scm><url>https://example.invalid/idempo</url><connection>scm:git:https://example.invalid/idempo.git</connection></scm>
			""";

	private final Path root;

	private final Path gnupgHome;

	TestBundle(Path root, Path gnupgHome) {
		this.root = root;
		this.gnupgHome = gnupgHome;
	}

	/**
	 * Makes a GnuPG home with a signing key without passphrase.
	 */
	static void generateKey(Path gnupgHome) throws IOException {
		Files.setPosixFilePermissions(gnupgHome, PosixFilePermissions.fromString("rwx------"));
		gpg(gnupgHome, "--passphrase", "", "--pinentry-mode", "loopback", "--quick-gen-key",
				"idempo test <test@idempo.invalid>", "ed25519", "sign", "never");
	}

	static void stopAgent(Path gnupgHome) throws IOException {
		run(List.of("gpgconf", "--homedir", gnupgHome.toString(), "--kill", "gpg-agent"));
	}

	/**
	 * Writes a complete bundle: idempo-parent with the metadata and idempo-core, a jar
	 * that inherits it.
	 */
	void writeComplete() throws IOException {
		write("idempo-parent", ".pom", pom("idempo-parent", "pom", "", METADATA));
		write("idempo-parent", "-cyclonedx.json", "{}");
		write("idempo-parent", "-cyclonedx.xml", "<bom/>");
		String parent = "<parent><groupId>" + GROUP + "</groupId><artifactId>idempo-parent</artifactId><version>"
				+ VERSION + "</version></parent>";
		write("idempo-core", ".pom", pom("idempo-core", "jar", parent, ""));
		writeJar("idempo-core", ".jar", "dev/idempo/Idempotent.class");
		writeJar("idempo-core", "-sources.jar", "dev/idempo/Idempotent.java");
		writeJar("idempo-core", "-javadoc.jar", "index.html");
		write("idempo-core", "-cyclonedx.json", "{}");
		write("idempo-core", "-cyclonedx.xml", "<bom/>");
	}

	static String pom(String artifactId, String packaging, String parent, String metadata) {
		String groupId = parent.isEmpty() ? "<groupId>" + GROUP + "</groupId><version>" + VERSION + "</version>" : "";
		return "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>" + parent
				+ groupId + "<artifactId>" + artifactId + "</artifactId><packaging>" + packaging + "</packaging><name>"
				+ artifactId + "</name><description>The " + artifactId + " artifact</description>" + metadata
				+ "</project>";
	}

	/**
	 * Writes one file of an artifact, signed and checksummed as the release profile does.
	 */
	Path write(String artifactId, String suffix, String content) throws IOException {
		Path file = file(artifactId, suffix);
		Files.createDirectories(file.getParent());
		Files.writeString(file, content);
		sign(file);
		writeChecksums(file);
		return file;
	}

	private void writeJar(String artifactId, String suffix, String entry) throws IOException {
		Path file = file(artifactId, suffix);
		Files.createDirectories(file.getParent());
		try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
			zip.putNextEntry(new ZipEntry(entry));
			zip.write(entry.getBytes(StandardCharsets.UTF_8));
			zip.closeEntry();
		}
		sign(file);
		writeChecksums(file);
	}

	Path file(String artifactId, String suffix) {
		return this.root.resolve("dev/idempo")
			.resolve(artifactId)
			.resolve(VERSION)
			.resolve(artifactId + "-" + VERSION + suffix);
	}

	void sign(Path file) throws IOException {
		Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".asc"));
		gpg(this.gnupgHome, "--armor", "--detach-sign", file.toString());
	}

	static void writeChecksums(Path file) throws IOException {
		byte[] content = Files.readAllBytes(file);
		Files.writeString(file.resolveSibling(file.getFileName() + ".md5"), digest("MD5", content));
		Files.writeString(file.resolveSibling(file.getFileName() + ".sha1"), digest("SHA-1", content));
	}

	private static String digest(String algorithm, byte[] content) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void gpg(Path gnupgHome, String... arguments) throws IOException {
		List<String> command = new ArrayList<>(List.of("gpg", "--batch", "--homedir", gnupgHome.toString()));
		command.addAll(List.of(arguments));
		run(command);
	}

	private static void run(List<String> command) throws IOException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		try {
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IOException(command + " failed: " + output);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException(ex);
		}
	}

}
