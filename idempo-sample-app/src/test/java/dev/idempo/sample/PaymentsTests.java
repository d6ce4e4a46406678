package dev.idempo.sample;

// tag::payments-tests[]
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.test.IdempotencyStoreResetExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;

import static dev.idempo.test.IdempotencyRequestPostProcessors.idempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.problem;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

@SpringBootTest
@AutoConfigureMockMvc
// empties the in-memory store before each test
@ExtendWith(IdempotencyStoreResetExtension.class)
class PaymentsTests {

	@Autowired
	MockMvc mvc;

	@Test
	void retryIsReplayed() throws Exception {
		String json = "{\"amount\":25.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}";
		String other = "{\"amount\":99.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}";
		this.mvc.perform(payment("pay-1", json)).andExpect(status().isCreated()).andExpect(notReplayed());
		this.mvc.perform(payment("pay-1", json)).andExpect(status().isCreated()).andExpect(replayed());
		this.mvc.perform(payment("pay-1", other)).andExpect(problem("key-reused"));
	}

	private static MockHttpServletRequestBuilder payment(String key, String body) {
		return post("/payments").with(idempotencyKey(key)).contentType(MediaType.APPLICATION_JSON).content(body);
	}

}
// end::payments-tests[]
