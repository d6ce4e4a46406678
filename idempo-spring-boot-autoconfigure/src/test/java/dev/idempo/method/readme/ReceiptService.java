package dev.idempo.method.readme;

import java.math.BigDecimal;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.stereotype.Service;

// tag::reactive-methods[]
@Service
public class ReceiptService {

	// claimed when subscribed; each subscription is a call
	@Idempotent(key = "#order.id()")
	public Mono<Receipt> charge(Order order) {
		return Mono.fromSupplier(() -> new Receipt(order.id(), order.amount()));
	}

	// claimed when called; the future completes with the stored or the new receipt
	@Idempotent(key = "#order.id()")
	public CompletableFuture<Receipt> chargeLater(Order order) {
		return CompletableFuture.completedFuture(new Receipt(order.id(), order.amount()));
	}

	public record Order(String id, BigDecimal amount) {
	}

	public record Receipt(String orderId, BigDecimal amount) {
	}

}
// end::reactive-methods[]
