package dev.idempo.method.readme;

import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.Idempotent;

import org.springframework.stereotype.Service;

// tag::service-method[]
@Service
public class ShippingService {

	private final AtomicInteger labels = new AtomicInteger();

	// one label per order, however often the order is shipped
	@Idempotent(key = "#order.id()", ttl = "7d")
	public Label ship(Order order) {
		return new Label(order.id(), "LBL-" + this.labels.incrementAndGet());
	}

	public record Order(String id, String address) {
	}

	public record Label(String orderId, String trackingNumber) {
	}

}
// end::service-method[]
