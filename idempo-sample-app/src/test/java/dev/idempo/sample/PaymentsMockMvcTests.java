package dev.idempo.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.test.IdempotencyStoreResetExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

import static dev.idempo.test.IdempotencyRequestPostProcessors.idempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.problem;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The sample's payments through MockMvc with idempo's test kit: keys, replays and
 * problems, and a store emptied between tests so that fixed keys can be reused.
 */
@SpringBootTest(properties = "sample.bank-delay=0s")
@AutoConfigureMockMvc
@ExtendWith(IdempotencyStoreResetExtension.class)
class PaymentsMockMvcTests {

	private static final String PAYMENT = "{\"amount\":25.00,\"currency\":\"EUR\",\"recipient\":\"alice\"}";

	@Autowired
	MockMvc mvc;

	@Test
	void retriedPaymentIsReplayed() throws Exception {
		this.mvc.perform(payment("pay-1", PAYMENT)).andExpect(status().isCreated()).andExpect(notReplayed());
		this.mvc.perform(payment("pay-1", PAYMENT)).andExpect(status().isCreated()).andExpect(replayed());
	}

	@Test
	void keyReusedWithAnotherPaymentIsRejected() throws Exception {
		this.mvc.perform(payment("pay-1", PAYMENT)).andExpect(notReplayed());
		this.mvc.perform(payment("pay-1", PAYMENT.replace("25.00", "26.00")))
			.andExpect(status().isUnprocessableContent())
			.andExpect(problem("key-reused"));
	}

	@Test
	void transferWithoutKeyIsRejected() throws Exception {
		this.mvc.perform(post("/transfers").contentType(MediaType.APPLICATION_JSON).content(PAYMENT))
			.andExpect(status().isBadRequest())
			.andExpect(problem("missing-key"));
	}

	private static org.springframework.test.web.servlet.RequestBuilder payment(String key, String body) {
		return post("/payments").with(idempotencyKey(key)).contentType(MediaType.APPLICATION_JSON).content(body);
	}

}
