package dev.idempo.method.readme;

import java.time.Duration;
import java.time.YearMonth;
import java.util.List;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.IdempotencyTemplate.Options;

import org.springframework.core.ParameterizedTypeReference;

// tag::template[]
public class InvoiceRun {

	private static final ParameterizedTypeReference<List<Invoice>> INVOICES = new ParameterizedTypeReference<>() {
	};

	private final IdempotencyTemplate idempotency;

	private final Billing billing;

	public InvoiceRun(IdempotencyTemplate idempotency, Billing billing) {
		this.idempotency = idempotency;
		this.billing = billing;
	}

	public List<Invoice> invoice(String customer, YearMonth month) {
		// once per customer and month; the result is kept for 90 days
		return this.idempotency.with(Options.defaults().ttl(Duration.ofDays(90)))
			.execute("invoices", customer + "/" + month, INVOICES, () -> this.billing.invoice(customer, month));
	}

	public record Invoice(String customer, String month, long cents) {
	}

	public interface Billing {

		List<Invoice> invoice(String customer, YearMonth month);

	}

}
// end::template[]
