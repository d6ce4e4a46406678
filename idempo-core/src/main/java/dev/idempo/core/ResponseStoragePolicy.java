package dev.idempo.core;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Which response statuses are stored and replayed, and which release their key instead:
 * {@code idempo.responses.stored} and {@code idempo.responses.not-stored}. Each entry is
 * a status code ({@code 201}) or a class of them ({@code 4xx}); a status is stored when
 * an entry of {@link #stored()} matches it and none of {@link #notStored()} does.
 * Immutable; resolved once per handler.
 *
 * @author idempo
 */
public final class ResponseStoragePolicy {

	/** The stored entries by default. */
	public static final List<String> DEFAULT_STORED = List.of("2xx", "3xx", "4xx");

	/**
	 * The not-stored entries by default: statuses that ask the client to retry later.
	 */
	public static final List<String> DEFAULT_NOT_STORED = List.of("408", "425", "429");

	/**
	 * The default: 2xx, 3xx and 4xx but 408, 425 and 429; never a 5xx.
	 */
	public static final ResponseStoragePolicy DEFAULT = of(DEFAULT_STORED, DEFAULT_NOT_STORED);

	private static final int MIN_STATUS = 100;

	private static final int MAX_STATUS = 599;

	private final List<String> stored;

	private final List<String> notStored;

	/** Indexed by status. */
	private final BitSet storedStatuses;

	private ResponseStoragePolicy(List<String> stored, List<String> notStored) {
		this.stored = stored;
		this.notStored = notStored;
		this.storedStatuses = new BitSet(MAX_STATUS + 1);
		for (String entry : stored) {
			this.storedStatuses.set(first(entry), last(entry) + 1);
		}
		for (String entry : notStored) {
			this.storedStatuses.clear(first(entry), last(entry) + 1);
		}
	}

	/**
	 * A policy.
	 * @param stored entries whose statuses are stored
	 * @param notStored entries whose statuses are never stored, even when {@code stored}
	 * matches them
	 * @return the policy
	 * @throws IllegalArgumentException if an entry is neither a status code from 100 to
	 * 599 nor a class from {@code 1xx} to {@code 5xx}
	 */
	public static ResponseStoragePolicy of(List<String> stored, List<String> notStored) {
		return new ResponseStoragePolicy(normalize(stored), normalize(notStored));
	}

	/**
	 * Checks one entry.
	 * @param entry the entry
	 * @return why it is invalid, or {@code null} if it is valid
	 */
	public static @Nullable String problem(String entry) {
		String value = entry.trim().toLowerCase(Locale.ROOT);
		if (value.matches("[1-5]xx")) {
			return null;
		}
		if (value.matches("[0-9]{3}")) {
			int status = Integer.parseInt(value);
			if (status >= MIN_STATUS && status <= MAX_STATUS) {
				return null;
			}
		}
		return "'" + entry + "' is neither a status code from 100 to 599 (201) nor a class from 1xx to 5xx (4xx)";
	}

	private static List<String> normalize(List<String> entries) {
		List<String> normalized = new ArrayList<>(entries.size());
		for (String entry : entries) {
			String problem = problem(entry);
			if (problem != null) {
				throw new IllegalArgumentException(problem);
			}
			normalized.add(entry.trim().toLowerCase(Locale.ROOT));
		}
		return List.copyOf(normalized);
	}

	private static int first(String entry) {
		return entry.endsWith("xx") ? (entry.charAt(0) - '0') * 100 : Integer.parseInt(entry);
	}

	private static int last(String entry) {
		return entry.endsWith("xx") ? (entry.charAt(0) - '0') * 100 + 99 : Integer.parseInt(entry);
	}

	/**
	 * Whether a response with this status is stored and replayed.
	 * @param status the status
	 * @return whether it is stored; {@code false} for a status outside 100 to 599
	 */
	public boolean isStored(int status) {
		return status >= MIN_STATUS && status <= MAX_STATUS && this.storedStatuses.get(status);
	}

	/**
	 * The first success status (2xx) this policy does not store, which a transactional
	 * handler cannot answer: its writes commit only with a record.
	 * @return the status, or {@code null} if every 2xx status is stored
	 */
	public @Nullable Integer firstUnstoredSuccess() {
		for (int status = 200; status <= 299; status++) {
			if (!isStored(status)) {
				return status;
			}
		}
		return null;
	}

	/**
	 * The stored entries, trimmed and lower case.
	 * @return the entries
	 */
	public List<String> stored() {
		return this.stored;
	}

	/**
	 * The not-stored entries, trimmed and lower case.
	 * @return the entries
	 */
	public List<String> notStored() {
		return this.notStored;
	}

	/**
	 * Whether a documented response status is stored: a code ({@code 201}), a class
	 * ({@code 2XX}, as OpenAPI writes it) whose every status is stored, or
	 * {@code default}, which stands for any status the policy stores.
	 * @param documented the status as an OpenAPI document keys its responses
	 * @return whether a response documented so is replayed
	 */
	public boolean isStored(String documented) {
		String value = documented.trim().toLowerCase(Locale.ROOT);
		if (value.equals("default")) {
			return !this.storedStatuses.isEmpty();
		}
		if (value.matches("[1-5]xx")) {
			int first = first(value);
			return this.storedStatuses.get(first, first + 100).cardinality() == 100;
		}
		return value.matches("[0-9]{3}") && isStored(Integer.parseInt(value));
	}

	/**
	 * Says which statuses are stored, as {@code "2xx, 3xx, 4xx except 408, 425, 429"}.
	 * @return the description
	 */
	@Override
	public String toString() {
		String stored = this.stored.isEmpty() ? "none" : String.join(", ", this.stored);
		return this.notStored.isEmpty() ? stored : stored + " except " + String.join(", ", this.notStored);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other == this
				|| (other instanceof ResponseStoragePolicy that && this.storedStatuses.equals(that.storedStatuses));
	}

	@Override
	public int hashCode() {
		return this.storedStatuses.hashCode();
	}

}
