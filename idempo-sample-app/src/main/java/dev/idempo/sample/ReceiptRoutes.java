package dev.idempo.sample;

import java.math.BigDecimal;
import java.net.URI;
import java.util.UUID;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Receipts, a functional endpoint without {@code @Idempotent}: protected by the
 * {@code idempo.routes} entry of {@code application.yml}, which requires a key.
 *
 * @author idempo
 */
@Configuration(proxyBeanMethods = false)
public class ReceiptRoutes {

	/**
	 * A receipt asked for.
	 *
	 * @param paymentId the payment it is for
	 * @param amount its amount
	 */
	public record ReceiptRequest(String paymentId, BigDecimal amount) {
	}

	/**
	 * An issued receipt.
	 *
	 * @param id its id, new for every receipt issued
	 * @param paymentId the payment it is for
	 * @param amount its amount
	 */
	public record Receipt(String id, String paymentId, BigDecimal amount) {
	}

	@Bean
	RouterFunction<ServerResponse> receipts() {
		return RouterFunctions.route().POST("/receipts", ReceiptRoutes::issue).build();
	}

	private static ServerResponse issue(ServerRequest request) throws Exception {
		ReceiptRequest receipt = request.body(ReceiptRequest.class);
		Receipt issued = new Receipt("rcp-" + UUID.randomUUID(), receipt.paymentId(), receipt.amount());
		return ServerResponse.created(URI.create("/receipts/" + issued.id())).body(issued);
	}

}
