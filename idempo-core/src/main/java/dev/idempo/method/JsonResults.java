package dev.idempo.method;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.TypeFactory;

import dev.idempo.core.CapturedResponse;
import dev.idempo.core.ResponseEnvelope;

import org.springframework.core.ResolvableType;

/**
 * Writes the results of idempotent calls as JSON through the application's
 * {@link JsonMapper} (its modules and naming apply), in the envelope that web responses
 * are stored in ({@link ResponseEnvelope}): status {@code 200} with the JSON of the
 * value, or {@code 204} with no body for {@code null} and {@code void}. The
 * {@code idempo} Actuator endpoint therefore shows method records like responses. Results
 * are read back as the declared type, generics included.
 *
 * @author idempo
 */
public final class JsonResults {

	private static final Map<String, List<String>> JSON = Map.of("Content-Type", List.of("application/json"));

	private static final int VALUE = 200;

	private static final int NO_VALUE = 204;

	private final JsonMapper mapper;

	/**
	 * Creates results written by {@code mapper}.
	 * @param mapper the application's mapper
	 */
	public JsonResults(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * The JSON type of a declared type, generics resolved as far as {@code type} knows
	 * them.
	 * @param type the declared type
	 * @return the JSON type
	 */
	public JavaType javaType(ResolvableType type) {
		TypeFactory types = this.mapper.getTypeFactory();
		if (type.isArray()) {
			return types.constructArrayType(javaType(type.getComponentType()));
		}
		Class<?> raw = type.resolve(Object.class);
		ResolvableType[] generics = type.getGenerics();
		if (generics.length == 0 || raw.getTypeParameters().length != generics.length) {
			return types.constructType(raw);
		}
		JavaType[] arguments = new JavaType[generics.length];
		for (int i = 0; i < generics.length; i++) {
			arguments[i] = javaType(generics[i]);
		}
		return types.constructParametricType(raw, arguments);
	}

	/**
	 * Encodes a result.
	 * @param value the result, {@code null} for none
	 * @param type its declared type
	 * @return the envelope
	 * @throws JacksonException if it cannot be written as JSON
	 */
	public byte[] encode(@Nullable Object value, JavaType type) {
		if (value == null) {
			return ResponseEnvelope.encode(NO_VALUE, Map.of(), new byte[0], 0, 0);
		}
		byte[] json = this.mapper.writerFor(type).writeValueAsBytes(value);
		return ResponseEnvelope.encode(VALUE, JSON, json, 0, json.length);
	}

	/**
	 * Decodes a result.
	 * @param envelope the stored envelope
	 * @param type the declared type to read it as
	 * @return the result, {@code null} for none
	 * @throws IllegalArgumentException if the envelope is corrupt or not a result
	 * @throws JacksonException if its JSON does not fit {@code type}
	 */
	public @Nullable Object decode(byte[] envelope, JavaType type) {
		CapturedResponse stored = ResponseEnvelope.decode(envelope);
		if (stored.status() == NO_VALUE || type.hasRawClass(void.class) || type.hasRawClass(Void.class)) {
			return null;
		}
		if (stored.status() != VALUE) {
			throw new IllegalArgumentException(
					"The record holds a web response (status " + stored.status() + "), not a method result");
		}
		return this.mapper.readValue(stored.body(), type);
	}

	/**
	 * The JSON of an argument, for the fingerprint of a call.
	 * @param argument the argument
	 * @return its JSON
	 * @throws JacksonException if it cannot be written as JSON
	 */
	public byte[] json(@Nullable Object argument) {
		return this.mapper.writeValueAsBytes(argument);
	}

}
