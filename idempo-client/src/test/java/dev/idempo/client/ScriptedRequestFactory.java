package dev.idempo.client;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;

/**
 * A request factory that answers each request it is asked to send with the next scripted
 * outcome (an answer or an I/O exception) and records what was sent: the headers, the
 * body, and whether every answer handed out before was closed by then.
 *
 * @author idempo
 */
final class ScriptedRequestFactory implements ClientHttpRequestFactory {

	private final Deque<Object> outcomes = new ArrayDeque<>();

	private final List<Sent> sent = new ArrayList<>();

	private final List<Answer> answers = new ArrayList<>();

	/**
	 * Scripts an answer.
	 * @param status its status
	 * @param headers its headers, as name, value, name, value ...
	 * @return this factory
	 */
	synchronized ScriptedRequestFactory answer(int status, String... headers) {
		Answer answer = new Answer(status, ("answer " + (this.outcomes.size() + 1)).getBytes(StandardCharsets.UTF_8));
		for (int i = 0; i < headers.length; i += 2) {
			answer.getHeaders().add(headers[i], headers[i + 1]);
		}
		this.outcomes.add(answer);
		return this;
	}

	/**
	 * Scripts a failure.
	 * @param failure what the attempt throws
	 * @return this factory
	 */
	synchronized ScriptedRequestFactory fail(IOException failure) {
		this.outcomes.add(failure);
		return this;
	}

	synchronized List<Sent> sent() {
		return List.copyOf(this.sent);
	}

	synchronized List<Answer> answers() {
		return List.copyOf(this.answers);
	}

	@Override
	public ClientHttpRequest createRequest(URI uri, HttpMethod httpMethod) {
		return new MockClientHttpRequest(httpMethod, uri) {

			@Override
			protected ClientHttpResponse executeInternal() throws IOException {
				return next(this);
			}

		};
	}

	private synchronized ClientHttpResponse next(MockClientHttpRequest request) throws IOException {
		boolean earlierClosed = this.answers.stream().allMatch(Answer::isClosed);
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(request.getHeaders());
		this.sent.add(new Sent(request.getMethod(), headers, request.getBodyAsBytes(), earlierClosed));
		Object outcome = this.outcomes.poll();
		if (outcome == null) {
			throw new IllegalStateException("No outcome scripted for attempt " + this.sent.size());
		}
		if (outcome instanceof IOException failure) {
			throw failure;
		}
		Answer answer = (Answer) outcome;
		this.answers.add(answer);
		return answer;
	}

	/** What one attempt sent. */
	record Sent(HttpMethod method, HttpHeaders headers, byte[] body, boolean earlierAnswersClosed) {

		String key() {
			return this.headers.getFirst("Idempotency-Key");
		}

	}

	/** An answer that counts its closes. */
	static final class Answer extends MockClientHttpResponse {

		private volatile int closes;

		Answer(int status, byte[] body) {
			super(body, status);
		}

		@Override
		public void close() {
			this.closes++;
			super.close();
		}

		boolean isClosed() {
			return this.closes > 0;
		}

		int closes() {
			return this.closes;
		}

	}

}
