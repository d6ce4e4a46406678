package dev.idempo.webflux;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import reactor.core.publisher.Mono;

import dev.idempo.core.RequestFingerprints;

import org.springframework.http.HttpHeaders;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.http.codec.multipart.FormFieldPart;
import org.springframework.http.codec.multipart.Part;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;

/**
 * What stands for a form body in a WebFlux request's fingerprint, read through the
 * exchange (which keeps what it parsed for the handler): the parameters of the query
 * string and of the body, merged as a servlet container merges them, so that an
 * URL-encoded form has the fingerprint it has on Spring MVC. Of a multipart body, its
 * fields count as parameters, and each file part by its name, file name and content type
 * (not yet its content).
 *
 * @author idempo
 */
final class FormFingerprints {

	private FormFingerprints() {
	}

	static Mono<byte[]> canonicalForm(ServerWebExchange exchange) {
		String contentType = exchange.getRequest().getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
		if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("multipart/")) {
			return exchange.getMultipartData().map((parts) -> multipart(exchange, parts));
		}
		return exchange.getFormData().map((form) -> {
			Map<String, List<String>> parameters = queryParameters(exchange);
			form.forEach((name, values) -> parameters.computeIfAbsent(name, (n) -> new ArrayList<>()).addAll(values));
			return RequestFingerprints.canonicalParameters(parameters);
		});
	}

	private static byte[] multipart(ServerWebExchange exchange, MultiValueMap<String, Part> parts) {
		Map<String, List<String>> parameters = queryParameters(exchange);
		List<FilePart> files = new ArrayList<>();
		parts.forEach((name, values) -> values.forEach((part) -> {
			if (part instanceof FormFieldPart field) {
				parameters.computeIfAbsent(name, (n) -> new ArrayList<>()).add(field.value());
			}
			else if (part instanceof FilePart file) {
				files.add(file);
			}
		}));
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		DataOutputStream out = new DataOutputStream(bytes);
		try {
			RequestFingerprints.writeParameters(out, parameters);
			for (FilePart file : files) {
				RequestFingerprints.writeField(out, "f");
				RequestFingerprints.writeField(out, file.name());
				RequestFingerprints.writeField(out, file.filename());
				RequestFingerprints.writeField(out, String.valueOf(file.headers().getFirst(HttpHeaders.CONTENT_TYPE)));
			}
			out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return bytes.toByteArray();
	}

	private static Map<String, List<String>> queryParameters(ServerWebExchange exchange) {
		Map<String, List<String>> parameters = new LinkedHashMap<>();
		exchange.getRequest().getQueryParams().forEach((name, values) -> parameters.put(name, new ArrayList<>(values)));
		return parameters;
	}

}
