package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Verifies detached ASCII-armoured signatures with the {@code gpg} on the path.
 *
 * @author idempo
 */
public final class Signatures {

	private final @Nullable Path home;

	/**
	 * Creates a verifier.
	 * @param home the GnuPG home whose public keys verify, or {@code null} for gpg's own
	 * choice ({@code GNUPGHOME}, else {@code ~/.gnupg})
	 */
	public Signatures(@Nullable Path home) {
		this.home = home;
	}

	/**
	 * Tells whether a signature verifies against its file.
	 * @param signature the {@code .asc} file
	 * @param file the file it signs
	 * @return {@code true} if gpg verifies it with a key of the keyring
	 * @throws IOException if gpg cannot be run
	 */
	public boolean verify(Path signature, Path file) throws IOException {
		List<String> command = new ArrayList<>(List.of("gpg", "--batch", "--no-tty", "--quiet"));
		if (this.home != null) {
			command.add("--homedir");
			command.add(this.home.toString());
		}
		command.addAll(List.of("--verify", signature.toString(), file.toString()));
		Process gpg = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		try {
			if (!gpg.waitFor(60, TimeUnit.SECONDS)) {
				gpg.destroyForcibly();
				throw new IOException("gpg did not verify " + signature + " within 60 seconds");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while gpg verified " + signature, ex);
		}
		return gpg.exitValue() == 0;
	}

}
