package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link BundleCheck}: it accepts a complete bundle and names what is wrong
 * with a bundle broken in one place.
 *
 * @author idempo
 */
class BundleCheckTests {

	@TempDir
	static Path gnupgHome;

	@TempDir
	Path root;

	private TestBundle bundle;

	@BeforeAll
	static void generateKey() throws IOException {
		TestBundle.generateKey(gnupgHome);
	}

	@AfterAll
	static void stopAgent() throws IOException {
		TestBundle.stopAgent(gnupgHome);
	}

	@BeforeEach
	void writeBundle() throws IOException {
		this.bundle = new TestBundle(this.root, gnupgHome);
		this.bundle.writeComplete();
	}

	@Test
	void acceptsCompleteBundle() throws IOException {
		assertThat(check()).isEmpty();
	}

	@Test
	void missingJavadocJarFails() throws IOException {
		Files.delete(this.bundle.file("idempo-core", "-javadoc.jar"));
		assertThat(check()).containsExactly("idempo-core: no -javadoc.jar");
	}

	@Test
	void missingSourcesJarAndSbomFail() throws IOException {
		Files.delete(this.bundle.file("idempo-core", "-sources.jar"));
		Files.delete(this.bundle.file("idempo-parent", "-cyclonedx.json"));
		assertThat(check()).containsExactlyInAnyOrder("idempo-core: no -sources.jar",
				"idempo-parent: no -cyclonedx.json");
	}

	@Test
	void signatureOfOtherContentFails() throws IOException {
		Path jar = this.bundle.file("idempo-core", ".jar");
		Files.write(jar, new byte[] { 1, 2, 3 });
		TestBundle.writeChecksums(jar);
		assertThat(check())
			.contains("idempo-core: idempo-core-1.0.0.jar.asc does not verify against idempo-core-1.0.0.jar");
	}

	@Test
	void missingSignatureFails() throws IOException {
		Files.delete(this.bundle.file("idempo-core", ".pom.asc"));
		assertThat(check()).containsExactly("idempo-core: no signature idempo-core-1.0.0.pom.asc");
	}

	@Test
	void wrongOrMissingChecksumFails() throws IOException {
		Files.writeString(this.bundle.file("idempo-core", ".jar.sha1"), "0".repeat(40));
		Files.delete(this.bundle.file("idempo-core", "-sources.jar.md5"));
		assertThat(check()).containsExactlyInAnyOrder(
				"idempo-core: idempo-core-1.0.0.jar.sha1 does not match idempo-core-1.0.0.jar",
				"idempo-core: no checksum idempo-core-1.0.0-sources.jar.md5");
	}

	@Test
	void pomWithoutInheritedMetadataFails() throws IOException {
		this.bundle.write("idempo-parent", ".pom", TestBundle.pom("idempo-parent", "pom", "", ""));
		assertThat(check()).contains("idempo-core: neither the POM nor a parent in the bundle has url",
				"idempo-core: neither the POM nor a parent in the bundle has licenses (a license with name and url)",
				"idempo-core: neither the POM nor a parent in the bundle has developers (a developer with id or name)",
				"idempo-core: neither the POM nor a parent in the bundle has scm (with url and connection)");
	}

	@Test
	void pomWithoutDescriptionFails() throws IOException {
		String pom = Files.readString(this.bundle.file("idempo-core", ".pom"))
			.replaceAll("<description>.*</description>", "");
		this.bundle.write("idempo-core", ".pom", pom);
		assertThat(check()).containsExactly("idempo-core: the POM has no description");
	}

	@Test
	void unresolvedRevisionFails() throws IOException {
		String pom = Files.readString(this.bundle.file("idempo-core", ".pom"))
			.replace("<version>1.0.0</version></parent>", "<version>${revision}</version></parent>");
		this.bundle.write("idempo-core", ".pom", pom);
		assertThat(check()).contains("idempo-core: version is ${revision}, not 1.0.0",
				"idempo-core: uses ${revision}, which only a flattened POM resolves");
	}

	@Test
	void missingAndUnexpectedArtifactsFail() throws IOException {
		this.bundle.write("idempo-release-check", ".pom", TestBundle.pom("idempo-release-check", "pom", "", ""));
		List<String> problems = new BundleCheck(this.root, TestBundle.GROUP, TestBundle.VERSION,
				List.of("idempo-parent", "idempo-core", "idempo-bom"), new Signatures(gnupgHome))
			.check();
		assertThat(problems).containsExactlyInAnyOrder("idempo-release-check: not an artifact that is published",
				"idempo-bom: no 1.0.0 in the bundle");
	}

	@Test
	void mainFailsOnIncompleteBundle() throws IOException {
		Files.delete(this.bundle.file("idempo-core", "-javadoc.jar"));
		Files.delete(this.bundle.file("idempo-core", "-javadoc.jar.asc"));
		String[] args = { this.root.toString(), TestBundle.GROUP, TestBundle.VERSION, "idempo-parent,idempo-core" };
		assertThatIllegalStateException().isThrownBy(() -> BundleCheck.run(args, new Signatures(gnupgHome)))
			.withMessageContaining("idempo-core: no -javadoc.jar");
	}

	private List<String> check() throws IOException {
		return new BundleCheck(this.root, TestBundle.GROUP, TestBundle.VERSION, List.of("idempo-parent", "idempo-core"),
				new Signatures(gnupgHome))
			.check();
	}

}
