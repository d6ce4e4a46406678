package dev.idempo.method.readme;

import java.util.List;

import dev.idempo.IdempotencyTemplate;

// tag::batch-listener[]
public class PaymentBatchListener {

	private final IdempotencyTemplate idempotency;

	private final Ledger ledger;

	public PaymentBatchListener(IdempotencyTemplate idempotency, Ledger ledger) {
		this.idempotency = idempotency;
		this.ledger = ledger;
	}

	// called with a batch of messages, for instance by a batch @KafkaListener
	public void onBatch(List<PaymentMessage> batch) {
		for (PaymentMessage message : batch) {
			// each record is its own idempotent call: a redelivered batch skips the
			// records that already ran and runs the rest
			this.idempotency.execute("payments", message.paymentId(), () -> this.ledger.book(message));
		}
	}

	public record PaymentMessage(String paymentId, long cents) {
	}

	public interface Ledger {

		void book(PaymentMessage message);

	}

}
// end::batch-listener[]
