package dev.idempo.web;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.UUID;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real HTTP client against the application under test.
 *
 * @author idempo
 */
public final class TestHttp {

	/**
	 * A client of an application started on a random port.
	 * @param context the application
	 * @return a client of its {@code local.server.port}
	 */
	public static TestHttp of(ConfigurableApplicationContext context) {
		return new TestHttp(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")));
	}

	/**
	 * {@code url} with its host and port replaced by the loopback address and
	 * {@code port} (a server's URL pointed at a proxy in front of it).
	 * @param url the server's URL
	 * @param port the proxy's port
	 * @return the URL
	 */
	public static URI onLoopbackPort(URI url, int port) {
		try {
			return new URI(url.getScheme(), url.getUserInfo(), "127.0.0.1", port, url.getPath(), null, null);
		}
		catch (URISyntaxException ex) {
			throw new IllegalArgumentException(ex);
		}
	}

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.followRedirects(HttpClient.Redirect.NEVER)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	private final int port;

	public TestHttp(int port) {
		this.port = port;
	}

	public static String newKey() {
		return UUID.randomUUID().toString();
	}

	public static String basic(String user) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8));
	}

	public HttpRequest.Builder request(String method, String path, String body, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(60))
			.method(method,
					(body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody());
		if (body != null) {
			builder.header("Content-Type", "application/json");
		}
		for (int i = 0; i < headers.length; i += 2) {
			builder.header(headers[i], headers[i + 1]);
		}
		return builder;
	}

	public HttpResponse<byte[]> send(HttpRequest.Builder request) {
		try {
			return this.client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	public HttpResponse<byte[]> post(String path, String body, String... headers) {
		return send(request("POST", path, body, headers));
	}

	public HttpResponse<byte[]> postWithKey(String path, String key, String body) {
		return send(request("POST", path, body, "Idempotency-Key", key));
	}

	public static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

}
