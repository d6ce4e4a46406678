package dev.idempo.method.readme;

import java.time.YearMonth;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.method.readme.InvoiceRun.Invoice;
import dev.idempo.method.readme.PaymentBatchListener.PaymentMessage;
import dev.idempo.method.readme.ShippingService.Label;
import dev.idempo.method.readme.ShippingService.Order;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Runs the README's examples of idempotent methods, the template and batch listeners.
 *
 * @author idempo
 */
class ReadmeExamplesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withBean(ShippingService.class);

	@Test
	void aServiceMethodRunsOncePerKey() {
		this.contextRunner.run((context) -> {
			ShippingService shipping = context.getBean(ShippingService.class);
			Label first = shipping.ship(new Order("order-1", "Main Street 1"));
			Label again = shipping.ship(new Order("order-1", "Main Street 1"));
			Label other = shipping.ship(new Order("order-2", "Main Street 2"));
			assertThat(again).isEqualTo(first);
			assertThat(first.trackingNumber()).isEqualTo("LBL-1");
			assertThat(other.trackingNumber()).isEqualTo("LBL-2");
		});
	}

	@Test
	void aRedeliveredBatchRunsOnlyTheRecordsThatHadNotRun() {
		this.contextRunner.run((context) -> {
			Map<String, AtomicInteger> booked = new ConcurrentHashMap<>();
			AtomicInteger failuresLeft = new AtomicInteger(1);
			PaymentBatchListener listener = new PaymentBatchListener(context.getBean(IdempotencyTemplate.class),
					(message) -> {
						if (message.paymentId().equals("p-2") && failuresLeft.getAndDecrement() > 0) {
							throw new IllegalStateException("ledger unavailable");
						}
						booked.computeIfAbsent(message.paymentId(), (id) -> new AtomicInteger()).incrementAndGet();
					});
			List<PaymentMessage> batch = List.of(new PaymentMessage("p-1", 100), new PaymentMessage("p-2", 200),
					new PaymentMessage("p-3", 300));
			// the second record fails: the first is booked, the batch fails, the third
			// never ran
			assertThatIllegalStateException().isThrownBy(() -> listener.onBatch(batch))
				.withMessage("ledger unavailable");
			assertThat(booked).containsOnlyKeys("p-1");
			// the container redelivers the whole batch
			listener.onBatch(batch);
			assertThat(booked).containsOnlyKeys("p-1", "p-2", "p-3");
			assertThat(booked.values()).allMatch((count) -> count.get() == 1);
		});
	}

	@Test
	void theTemplateRunsOnceAndReadsTheGenericResult() {
		this.contextRunner.run((context) -> {
			AtomicInteger runs = new AtomicInteger();
			InvoiceRun invoices = new InvoiceRun(context.getBean(IdempotencyTemplate.class), (customer, month) -> {
				runs.incrementAndGet();
				return List.of(new Invoice(customer, month.toString(), 4200));
			});
			List<Invoice> first = invoices.invoice("acme", YearMonth.of(2026, 10));
			List<Invoice> again = invoices.invoice("acme", YearMonth.of(2026, 10));
			assertThat(again).isEqualTo(first);
			assertThat(again.get(0)).isInstanceOf(Invoice.class);
			assertThat(runs).hasValue(1);
		});
	}

}
