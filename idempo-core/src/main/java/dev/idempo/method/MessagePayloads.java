package dev.idempo.method;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ReflectionUtils;

/**
 * What a message argument contributes to a call's fingerprint: its payload. Messages are
 * infrastructure types (their headers change with every delivery: offsets, delivery
 * counts, timestamps), but their payload is the call's input, so two messages with one
 * key and different payloads must not share a result. Known by class name, so that idempo
 * needs none of these libraries: Spring's {@code Message} ({@code getPayload()}), Kafka's
 * {@code ConsumerRecord} ({@code key()} and {@code value()}) and Spring AMQP's
 * {@code Message} ({@code getBody()}).
 *
 * @author idempo
 */
final class MessagePayloads {

	private static final List<Accessor> ACCESSORS = List.of(
			new Accessor("org.springframework.messaging.Message", "getPayload"),
			new Accessor("org.apache.kafka.clients.consumer.ConsumerRecord", "key", "value"),
			new Accessor("org.springframework.amqp.core.Message", "getBody"));

	private MessagePayloads() {
	}

	/**
	 * Whether arguments declared as {@code type} carry a payload.
	 * @param type a parameter type
	 * @return whether it is one of the known message types, or a subtype of one
	 */
	static boolean carriesPayload(Class<?> type) {
		return ACCESSORS.stream().anyMatch((accessor) -> accessor.matches(type));
	}

	/**
	 * The part of {@code argument} that is the call's input.
	 * @param argument an argument
	 * @return the payload of a message (a list for Kafka's key and value), else the
	 * argument
	 */
	static @Nullable Object payloadOf(@Nullable Object argument) {
		if (argument == null) {
			return null;
		}
		for (Accessor accessor : ACCESSORS) {
			if (accessor.matches(argument.getClass())) {
				return accessor.read(argument);
			}
		}
		return argument;
	}

	private record Accessor(String typeName, String... methods) {

		boolean matches(Class<?> type) {
			for (Class<?> candidate = type; candidate != null; candidate = candidate.getSuperclass()) {
				if (candidate.getName().equals(this.typeName) || implementsIt(candidate)) {
					return true;
				}
			}
			return false;
		}

		private boolean implementsIt(Class<?> type) {
			for (Class<?> implemented : type.getInterfaces()) {
				if (implemented.getName().equals(this.typeName) || implementsIt(implemented)) {
					return true;
				}
			}
			return false;
		}

		@Nullable Object read(Object message) {
			List<@Nullable Object> parts = new ArrayList<>();
			for (String name : this.methods) {
				Method method = ReflectionUtils.findMethod(message.getClass(), name);
				if (method == null) {
					throw new IllegalStateException("No " + name + "() on " + message.getClass().getName());
				}
				ReflectionUtils.makeAccessible(method);
				parts.add(ReflectionUtils.invokeMethod(method, message));
			}
			return (parts.size() == 1) ? parts.get(0) : parts;
		}

	}

}
