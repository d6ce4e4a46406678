package dev.idempo.docs;

import java.math.RoundingMode;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempo.sample.Payment;
import dev.idempo.sample.PaymentRequest;

/**
 * The payments service the snippets' handlers call, counting how often it really pays.
 */
class Payments {

	private final Map<String, Payment> saved = new ConcurrentHashMap<>();

	private final AtomicInteger sequence = new AtomicInteger();

	Payment save(PaymentRequest request) {
		String id = "pay_" + this.sequence.incrementAndGet();
		Payment payment = new Payment(id, request.amount().setScale(2, RoundingMode.HALF_UP), request.currency(),
				request.recipient(), "captured", Instant.now());
		this.saved.put(id, payment);
		return payment;
	}

	int count() {
		return this.saved.size();
	}

}
