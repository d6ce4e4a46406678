package dev.idempo.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpMethod;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two {@code curl} commands under the README's first handler, run as they are written
 * against that handler: nothing a reader types is missing (a {@code Content-Type}, a
 * field), and the answers are the ones the README prints beside them.
 */
@SpringBootTest(classes = GettingStartedTests.Application.class)
@AutoConfigureMockMvc
class ReadmeFirstExampleTests {

	private static final Pattern CURL = Pattern.compile("^\\$ curl (.*)$", Pattern.MULTILINE);

	private static final Pattern ARGUMENT = Pattern.compile("'([^']*)'|(\\S+)");

	private static final Pattern STATUS = Pattern.compile("^HTTP/1\\.1 (\\d{3})", Pattern.MULTILINE);

	@Autowired
	MockMvc mvc;

	@Autowired
	Payments payments;

	@Test
	void theReadmesFirstCurlCommandsGetTheAnswersPrintedBesideThem() throws Exception {
		String block = firstCurlBlock();
		List<String> commands = CURL.matcher(block).results().map((match) -> match.group(1)).toList();
		List<String> statuses = STATUS.matcher(block).results().map((match) -> match.group(1)).toList();
		assertThat(commands).hasSize(2);
		assertThat(statuses).containsExactly("201", "201");
		long paymentsBefore = this.payments.count();
		MockHttpServletResponse first = this.mvc.perform(request(commands.get(0))).andReturn().getResponse();
		MockHttpServletResponse retry = this.mvc.perform(request(commands.get(1))).andReturn().getResponse();
		assertThat(first.getStatus()).as(first.getContentAsString()).isEqualTo(201);
		assertThat(first.getHeader("Idempotent-Replayed")).isNull();
		assertThat(retry.getStatus()).as(retry.getContentAsString()).isEqualTo(201);
		assertThat(retry.getHeader("Idempotent-Replayed")).isEqualTo("true");
		assertThat(block).contains("Idempotent-Replayed: true");
		assertThat(retry.getContentAsString()).isEqualTo(first.getContentAsString());
		assertThat(this.payments.count()).isEqualTo(paymentsBefore + 1);
	}

	private String firstCurlBlock() throws IOException {
		String readme = Files.readString(DocumentationSnippets.ofRepository().root().resolve("README.md"));
		int curl = readme.indexOf("\n$ curl ");
		assertThat(curl).as("a '$ curl' line in the README").isPositive();
		int start = readme.lastIndexOf("```", curl);
		int end = readme.indexOf("```", curl);
		return readme.substring(start, end);
	}

	/**
	 * The request a {@code curl} command line sends, from the options the README uses:
	 * {@code -i}, {@code -X}, {@code -H} and {@code -d}, quoted as a shell reads them.
	 */
	private static MockHttpServletRequestBuilder request(String command) {
		List<String> arguments = new ArrayList<>();
		Matcher argument = ARGUMENT.matcher(command);
		while (argument.find()) {
			arguments.add((argument.group(1) != null) ? argument.group(1) : argument.group(2));
		}
		String method = "GET";
		String url = null;
		List<String> headers = new ArrayList<>();
		String body = null;
		for (int i = 0; i < arguments.size(); i++) {
			switch (arguments.get(i)) {
				case "-i" -> {
				}
				case "-X" -> method = arguments.get(++i);
				case "-H" -> headers.add(arguments.get(++i));
				case "-d" -> body = arguments.get(++i);
				default -> {
					assertThat(url).as("one URL in: " + command).isNull();
					url = arguments.get(i);
				}
			}
		}
		assertThat(url).as("a URL in: " + command).isNotNull();
		MockHttpServletRequestBuilder request = MockMvcRequestBuilders.request(HttpMethod.valueOf(method),
				url.substring(url.indexOf('/')));
		for (String header : headers) {
			int colon = header.indexOf(':');
			request.header(header.substring(0, colon).strip(), header.substring(colon + 1).strip());
		}
		if (body != null) {
			// curl -d sends application/x-www-form-urlencoded unless a Content-Type says
			// otherwise
			if (headers.stream().noneMatch((header) -> header.regionMatches(true, 0, "Content-Type:", 0, 13))) {
				request.contentType("application/x-www-form-urlencoded");
			}
			request.content(body);
		}
		return request;
	}

}
