package dev.idempo.core;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The canonical form of a JSON document without some of its fields, fingerprinted in
 * place of the body's bytes when {@code idempo.fingerprint.ignored-fields} is set: two
 * documents that differ only in the ignored fields, the order of object members,
 * whitespace or the spelling of a number ({@code 1.0}, {@code 1}, {@code 1e0}) have the
 * same form. The form is a length-prefixed encoding of the tree (a tag per value, members
 * sorted by name), not JSON, so no escaping can make two documents meet. A document with
 * a duplicate member name, trailing content, a number {@link BigDecimal} cannot hold, a
 * string with a lone surrogate (UTF-8 has no bytes for it) or anything else Jackson
 * refuses has no canonical form.
 *
 * @author idempo
 */
final class CanonicalJson {

	private static final byte[] VERSION = "canonical-json/1".getBytes(StandardCharsets.UTF_8);

	private static final JsonMapper MAPPER = JsonMapper.builder()
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
		.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
		.build();

	/** The ignored pointers, as sent (escaped). */
	private final Set<String> ignored;

	/** Every proper prefix of an ignored pointer: paths worth following. */
	private final Set<String> prefixes = new HashSet<>();

	CanonicalJson(List<String> ignoredPointers) {
		this.ignored = Set.copyOf(ignoredPointers);
		for (String pointer : ignoredPointers) {
			for (int i = pointer.indexOf('/', 1); i > 0; i = pointer.indexOf('/', i + 1)) {
				this.prefixes.add(pointer.substring(0, i));
			}
		}
		this.prefixes.add("");
	}

	/**
	 * Whether a content type is JSON: {@code application/json} or any
	 * {@code application/*+json}, whatever its parameters.
	 * @param contentType the content type, or {@code null}
	 * @return whether it is JSON
	 */
	static boolean isJson(@Nullable String contentType) {
		if (contentType == null) {
			return false;
		}
		String type = contentType.toLowerCase(Locale.ROOT);
		int parameters = type.indexOf(';');
		type = ((parameters >= 0) ? type.substring(0, parameters) : type).trim();
		return type.equals("application/json") || (type.startsWith("application/") && type.endsWith("+json"));
	}

	/**
	 * The canonical form of a document without the ignored fields.
	 * @param document the JSON bytes
	 * @return the form, or {@code null} if the bytes are not one JSON document
	 */
	byte @Nullable [] canonical(byte[] document) {
		JsonNode tree;
		try {
			tree = MAPPER.readTree(document);
		}
		catch (JacksonException | NumberFormatException ex) {
			// Jackson throws NumberFormatException for numbers BigDecimal cannot hold
			return null;
		}
		if (tree == null || tree.isMissingNode()) {
			return null;
		}
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(document.length + 16);
		DataOutputStream out = new DataOutputStream(bytes);
		try {
			out.write(VERSION);
			write(out, tree, "");
			out.flush();
		}
		catch (ArithmeticException | CharacterCodingException ex) {
			// a number whose scale overflows once its zeros are stripped, or a string
			// with a lone surrogate, which UTF-8 cannot tell apart from '?'
			return null;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return bytes.toByteArray();
	}

	/**
	 * Writes a value; {@code path} is its pointer while it may lead to an ignored field,
	 * else {@code null}.
	 */
	private void write(DataOutputStream out, JsonNode node, @Nullable String path) throws IOException {
		if (node.isObject()) {
			out.writeByte('o');
			for (String name : new TreeSet<>(node.propertyNames())) {
				member(out, name, node.get(name), path, true);
			}
			out.writeByte('e');
		}
		else if (node.isArray()) {
			out.writeByte('a');
			for (int i = 0; i < node.size(); i++) {
				member(out, (path != null) ? Integer.toString(i) : "", node.get(i), path, false);
			}
			out.writeByte('e');
		}
		else if (node.isNumber()) {
			out.writeByte('n');
			writeText(out, canonicalNumber(node));
		}
		else if (node.isString()) {
			out.writeByte('s');
			writeText(out, node.stringValue());
		}
		else if (node.isBoolean()) {
			out.writeByte(node.booleanValue() ? 't' : 'f');
		}
		else {
			out.writeByte('z');
		}
	}

	private void member(DataOutputStream out, String name, JsonNode value, @Nullable String path, boolean named)
			throws IOException {
		String memberPath = (path != null) ? path + "/" + escape(name) : null;
		if (memberPath != null && this.ignored.contains(memberPath)) {
			return;
		}
		out.writeByte('m');
		if (named) {
			writeText(out, name);
		}
		write(out, value, (memberPath != null && this.prefixes.contains(memberPath)) ? memberPath : null);
	}

	private static String canonicalNumber(JsonNode node) {
		BigDecimal value = node.isIntegralNumber() ? new BigDecimal(node.bigIntegerValue()) : node.decimalValue();
		return (value.signum() == 0) ? "0" : value.stripTrailingZeros().toString();
	}

	private static String escape(String name) {
		return (name.indexOf('~') < 0 && name.indexOf('/') < 0) ? name : name.replace("~", "~0").replace("/", "~1");
	}

	private static void writeText(DataOutputStream out, String value) throws IOException {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < value.length()
					&& Character.isLowSurrogate(value.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				// UTF-8 would write it as '?', like a '?' that was sent
				throw new CharacterCodingException();
			}
		}
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		out.writeInt(bytes.length);
		out.write(bytes);
	}

}
