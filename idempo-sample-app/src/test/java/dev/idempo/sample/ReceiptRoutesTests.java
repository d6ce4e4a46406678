package dev.idempo.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.idempo.test.IdempotencyStoreResetExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;

import static dev.idempo.test.IdempotencyRequestPostProcessors.idempotencyKey;
import static dev.idempo.test.IdempotencyResultMatchers.notReplayed;
import static dev.idempo.test.IdempotencyResultMatchers.problem;
import static dev.idempo.test.IdempotencyResultMatchers.replayed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The sample's functional endpoint, protected by its {@code idempo.routes} entry alone.
 */
@SpringBootTest
@AutoConfigureMockMvc
@ExtendWith(IdempotencyStoreResetExtension.class)
class ReceiptRoutesTests {

	private static final String RECEIPT = "{\"paymentId\":\"pay-1\",\"amount\":25.00}";

	@Autowired
	MockMvc mvc;

	@Test
	void aRetryOfTheRouteIsReplayed() throws Exception {
		MvcResult first = this.mvc.perform(receipt().with(idempotencyKey("rcp-1")))
			.andExpect(status().isCreated())
			.andExpect(notReplayed())
			.andReturn();
		MvcResult retry = this.mvc.perform(receipt().with(idempotencyKey("rcp-1")))
			.andExpect(status().isCreated())
			.andExpect(replayed())
			.andReturn();
		assertThat(retry.getResponse().getContentAsString()).isEqualTo(first.getResponse().getContentAsString());
	}

	@Test
	void theRouteRequiresAKey() throws Exception {
		this.mvc.perform(receipt()).andExpect(status().isBadRequest()).andExpect(problem("missing-key"));
	}

	private static MockHttpServletRequestBuilder receipt() {
		return post("/receipts").contentType(MediaType.APPLICATION_JSON).content(RECEIPT);
	}

}
