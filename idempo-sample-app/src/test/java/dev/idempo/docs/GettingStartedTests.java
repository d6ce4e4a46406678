package dev.idempo.docs;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;

import static dev.idempo.test.IdempotencyRequestPostProcessors.newIdempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The README's first handler does what the README says: a retry gets the same 201, the
 * payment is made once.
 */
@SpringBootTest(classes = GettingStartedTests.Application.class)
@AutoConfigureMockMvc
class GettingStartedTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	Payments payments;

	@Test
	void aRetriedPaymentIsReplayedAndPaidOnce() throws Exception {
		MockHttpServletRequestBuilder payment = post("/payments").with(newIdempotencyKey())
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"amount\":25,\"currency\":\"EUR\",\"recipient\":\"alice\"}");
		String first = this.mvc.perform(payment)
			.andExpect(status().isCreated())
			.andExpect(notReplayed())
			.andReturn()
			.getResponse()
			.getContentAsString();
		String retry = this.mvc.perform(payment)
			.andExpect(status().isCreated())
			.andExpect(replayed())
			.andReturn()
			.getResponse()
			.getContentAsString();
		assertThat(retry).isEqualTo(first);
		assertThat(this.payments.count()).isOne();
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ GettingStartedController.class, Payments.class })
	static class Application {

	}

}
