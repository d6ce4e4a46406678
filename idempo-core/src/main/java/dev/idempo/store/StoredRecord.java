package dev.idempo.store;

import java.util.Arrays;
import java.util.Objects;

/**
 * What a store keeps for a completed request: the request fingerprint and the encoded
 * response (an opaque, versioned envelope the store never interprets).
 *
 * @param fingerprint the request fingerprint (lowercase hex digest)
 * @param response the encoded response
 * @author idempo
 */
public record StoredRecord(String fingerprint, byte[] response) {

	public StoredRecord {
		Objects.requireNonNull(fingerprint, "fingerprint");
		Objects.requireNonNull(response, "response");
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof StoredRecord that) && this.fingerprint.equals(that.fingerprint)
				&& Arrays.equals(this.response, that.response);
	}

	@Override
	public int hashCode() {
		return 31 * this.fingerprint.hashCode() + Arrays.hashCode(this.response);
	}

	@Override
	public String toString() {
		return "StoredRecord[fingerprint=" + this.fingerprint + ", response=" + this.response.length + " bytes]";
	}

}
