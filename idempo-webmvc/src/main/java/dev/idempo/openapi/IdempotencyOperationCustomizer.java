package dev.idempo.openapi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import org.springdoc.core.customizers.GlobalOperationCustomizer;

import dev.idempo.core.IdempotencyKeyParser;
import dev.idempo.core.IdempotencySettings;
import dev.idempo.web.IdempotencyProblem;
import dev.idempo.web.IdempotentHandlers;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;

/**
 * Documents the operations of {@link dev.idempo.Idempotent} handlers: the key header
 * (required or not, its syntax and length), the replayed header
 * ({@code idempo.replayed-header}) of the responses whose status the handler's
 * {@code idempo.responses} policy stores, the problem responses idempo answers with their
 * {@code type}s, and the key's expiry policy as the operation extension
 * {@value #EXTENSION} (the IETF draft asks servers to publish it). A
 * {@code cacheResponse = false} handler is documented for what it does: a duplicate gets
 * 409 while the first request runs, and nothing is stored, so there is no replay, no key
 * reuse to detect and no TTL. A handler without the annotation that an
 * {@code idempo.routes} entry matches (one of its mapped paths, a URI variable taken as a
 * segment, with one of its methods) is documented with that entry's policy; functional
 * endpoints are not handler methods and are left to springdoc's own router operations.
 * Only for handlers reached with {@code POST}, {@code PUT}, {@code PATCH} or
 * {@code DELETE}; operations of other handlers are left alone.
 *
 * @author idempo
 */
public class IdempotencyOperationCustomizer implements GlobalOperationCustomizer {

	/** The operation extension that publishes the key policy. */
	public static final String EXTENSION = "x-idempotency";

	private static final Set<RequestMethod> PROTECTED = Set.of(RequestMethod.POST, RequestMethod.PUT,
			RequestMethod.PATCH, RequestMethod.DELETE);

	private static final String PROBLEM_JSON = "application/problem+json";

	private final IdempotentHandlers handlers;

	private final IdempotencySettings settings;

	/**
	 * Creates a customizer.
	 * @param handlers the handler policies (TTL, required, transactional)
	 * @param settings the settings (key header, whether keys are required, retry hints)
	 */
	public IdempotencyOperationCustomizer(IdempotentHandlers handlers, IdempotencySettings settings) {
		this.handlers = handlers;
		this.settings = settings;
	}

	@Override
	public Operation customize(Operation operation, HandlerMethod handlerMethod) {
		RequestMapping mapping = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getMethod(),
				RequestMapping.class);
		if (mapping == null || !isProtected(mapping)) {
			return operation;
		}
		// the annotation, else the first of idempo.routes that matches a mapped path
		IdempotentHandlers.Policy policy = this.handlers.policy(handlerMethod, paths(handlerMethod, mapping),
				methods(mapping));
		if (policy == null) {
			return operation;
		}
		boolean required = policy.required() || this.settings.keyRequired();
		addKeyParameter(operation, required, policy);
		ApiResponses responses = (operation.getResponses() != null) ? operation.getResponses() : new ApiResponses();
		operation.setResponses(responses);
		responses.forEach((status, response) -> {
			if (policy.cacheResponse() && policy.responses().isStored(status)) {
				response.addHeaderObject(this.settings.replayedHeader(),
						new Header()
							.description("`true` on a replayed response: the request with this key ran before, "
									+ "and this is its stored response, byte for byte.")
							.schema(new StringSchema()._enum(List.of("true"))));
			}
		});
		Map<String, List<IdempotencyProblem>> problems = new LinkedHashMap<>();
		for (IdempotencyProblem problem : problemsOf(policy)) {
			problems.computeIfAbsent(Integer.toString(problem.status().value()), (status) -> new ArrayList<>())
				.add(problem);
		}
		problems.forEach((status, list) -> {
			if (!responses.containsKey(status)) {
				responses.addApiResponse(status, problemResponse(list));
			}
		});
		operation.addExtension(EXTENSION, policyExtension(policy, required));
		return operation;
	}

	private Map<String, Object> policyExtension(IdempotentHandlers.Policy policy, boolean required) {
		Map<String, Object> policyExtension = new LinkedHashMap<>();
		policyExtension.put("key-header", this.settings.keyHeader());
		policyExtension.put("key-required", required);
		policyExtension.put("key-max-length", IdempotencyKeyParser.MAX_LENGTH);
		policyExtension.put("cache-response", policy.cacheResponse());
		if (policy.cacheResponse()) {
			policyExtension.put("stored-statuses", policy.responses().stored());
			policyExtension.put("not-stored-statuses", policy.responses().notStored());
			policyExtension.put("ttl", policy.ttl().toString());
			policyExtension.put("ttl-seconds", policy.ttl().toSeconds());
		}
		policyExtension.put("transactional", policy.transactional());
		return policyExtension;
	}

	private void addKeyParameter(Operation operation, boolean required, IdempotentHandlers.Policy policy) {
		String name = this.settings.keyHeader();
		List<Parameter> parameters = operation.getParameters();
		if (parameters != null && parameters.stream()
			.anyMatch(
					(parameter) -> "header".equals(parameter.getIn()) && name.equalsIgnoreCase(parameter.getName()))) {
			return;
		}
		Schema<String> schema = new StringSchema().minLength(1).maxLength(IdempotencyKeyParser.MAX_LENGTH);
		operation.addParametersItem(new HeaderParameter().name(name)
			.required(required)
			.description("A unique key per operation (for example a UUID), sent again unchanged on every retry. "
					+ "A Structured Fields string (`\"8e03978e-40d5\"`) or the bare value, 1 to "
					+ IdempotencyKeyParser.MAX_LENGTH + " characters of printable ASCII. "
					+ (policy.cacheResponse()
							? "The first request with a key runs; a retry with the same key and request "
									+ "gets the first response back if its status is stored (" + policy.responses()
									+ "); after any other status the key is free again and the retry runs"
							: "While a request with a key runs, another with the same key gets 409; responses are "
									+ "never stored or replayed, so a request sent after the first one ended runs "
									+ "again")
					+ (this.settings.keyHeaderAliases().isEmpty() ? ""
							: "; also accepted as " + String.join(", ", this.settings.keyHeaderAliases()))
					+ ".")
			.schema(schema)
			.example("8e03978e-40d5-43e8-bc93-6894a57f9324"));
	}

	private static List<IdempotencyProblem> problemsOf(IdempotentHandlers.Policy policy) {
		List<IdempotencyProblem> problems = new ArrayList<>(List.of(IdempotencyProblem.INVALID_KEY,
				IdempotencyProblem.MISSING_KEY, IdempotencyProblem.IN_PROGRESS, IdempotencyProblem.REQUEST_TOO_LARGE));
		if (policy.cacheResponse()) {
			// reuse is recognised against this operation's stored response, and a
			// lock-only operation stores none (a client that reuses the key of another
			// operation could still meet one: a client bug, left undocumented)
			problems.add(IdempotencyProblem.KEY_REUSED);
		}
		problems.add(IdempotencyProblem.STORE_UNAVAILABLE);
		problems.add(IdempotencyProblem.SERVER_BUSY);
		if (policy.transactional()) {
			problems.add(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE);
			problems.add(IdempotencyProblem.COMMIT_FAILED);
		}
		return problems;
	}

	private ApiResponse problemResponse(List<IdempotencyProblem> problems) {
		StringBuilder description = new StringBuilder();
		List<String> types = new ArrayList<>();
		for (IdempotencyProblem problem : problems) {
			if (!description.isEmpty()) {
				description.append(" Or: ");
			}
			description.append(problem.title()).append(" (`").append(problem.type()).append("`).");
			types.add(problem.type().toString());
		}
		Schema<?> body = new ObjectSchema().addProperty("type", new StringSchema()._enum(types))
			.addProperty("title", new StringSchema())
			.addProperty("status", new IntegerSchema())
			.addProperty("detail", new StringSchema())
			.addProperty("instance", new StringSchema());
		ApiResponse response = new ApiResponse().description(description.toString())
			.content(new Content().addMediaType(PROBLEM_JSON, new MediaType().schema(body)));
		if (problems.stream().anyMatch(IdempotencyOperationCustomizer::hasRetryAfter)) {
			response.addHeaderObject("Retry-After",
					new Header().description("Seconds to wait before retrying with the same key.")
						.schema(new IntegerSchema()));
		}
		return response;
	}

	private static boolean hasRetryAfter(IdempotencyProblem problem) {
		return problem == IdempotencyProblem.IN_PROGRESS || problem == IdempotencyProblem.STORE_UNAVAILABLE
				|| problem == IdempotencyProblem.COMMIT_FAILED || problem == IdempotencyProblem.SERVER_BUSY;
	}

	private static boolean isProtected(RequestMapping mapping) {
		// no method: every method, the unsafe ones too
		return mapping.method().length == 0 || Arrays.stream(mapping.method()).anyMatch(PROTECTED::contains);
	}

	private static List<String> methods(RequestMapping mapping) {
		return ((mapping.method().length == 0) ? PROTECTED.stream() : Arrays.stream(mapping.method()))
			.map(RequestMethod::name)
			.toList();
	}

	/** The handler's paths: its class's mapped paths joined with its own. */
	private static List<String> paths(HandlerMethod handlerMethod, RequestMapping mapping) {
		RequestMapping typeMapping = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getBeanType(),
				RequestMapping.class);
		String[] prefixes = (typeMapping != null && typeMapping.path().length > 0) ? typeMapping.path()
				: new String[] { "" };
		String[] suffixes = (mapping.path().length > 0) ? mapping.path() : new String[] { "" };
		List<String> paths = new ArrayList<>();
		for (String prefix : prefixes) {
			for (String suffix : suffixes) {
				paths.add(("/" + prefix + "/" + suffix).replaceAll("/+", "/").replaceAll("(.)/$", "$1"));
			}
		}
		return paths;
	}

}
