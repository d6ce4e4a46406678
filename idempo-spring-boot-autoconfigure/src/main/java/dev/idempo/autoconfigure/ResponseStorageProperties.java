package dev.idempo.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.idempo.core.ResponseStoragePolicy;

import org.springframework.validation.Errors;

/**
 * Which responses are stored and replayed; the rest release their key, so that a retry
 * runs the handler again.
 *
 * @author idempo
 */
public class ResponseStorageProperties {

	/**
	 * Statuses whose responses are stored and replayed: codes (201) or classes (4xx). 5xx
	 * may be added: a stored 500 is replayed like any other response.
	 */
	private List<String> stored = new ArrayList<>(ResponseStoragePolicy.DEFAULT_STORED);

	/**
	 * Statuses never stored even when "stored" matches them: codes (429) or classes;
	 * their responses release the key.
	 */
	private List<String> notStored = new ArrayList<>(ResponseStoragePolicy.DEFAULT_NOT_STORED);

	public List<String> getStored() {
		return this.stored;
	}

	public void setStored(List<String> stored) {
		this.stored = stored;
	}

	public List<String> getNotStored() {
		return this.notStored;
	}

	public void setNotStored(List<String> notStored) {
		this.notStored = notStored;
	}

	/**
	 * Rejects entries that are neither a status code nor a class.
	 * @param errors the errors of the bound object
	 * @param field the path of this object in it, such as {@code responses}
	 * @param property the property prefix, such as {@code idempo.responses}
	 */
	void validate(Errors errors, String field, String property) {
		rejectInvalidEntries(errors, field + ".stored", property + ".stored", this.stored);
		rejectInvalidEntries(errors, field + ".notStored", property + ".not-stored", this.notStored);
	}

	private static void rejectInvalidEntries(Errors errors, String field, String property, List<String> entries) {
		for (String entry : entries) {
			String problem = ResponseStoragePolicy.problem(entry);
			if (problem != null) {
				errors.rejectValue(field, property, problem);
			}
		}
	}

	/**
	 * The policy these properties describe.
	 * @return the policy
	 */
	public ResponseStoragePolicy toPolicy() {
		return ResponseStoragePolicy.of(this.stored, this.notStored);
	}

}
