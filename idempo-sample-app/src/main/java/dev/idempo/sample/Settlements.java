package dev.idempo.sample;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.idempo.Idempotent;

import org.springframework.stereotype.Service;

// tag::settlement-service[]
/**
 * Settles a business day with the bank: at most once per date, however often the job runs
 * (a restart, a second instance, a manual re-run), for as long as idempo keeps the
 * record.
 */
@Service
public class Settlements {

	private static final Log logger = LogFactory.getLog(Settlements.class);

	private final AtomicInteger runs = new AtomicInteger();

	@Idempotent(key = "#businessDate", ttl = "${sample.settlement-ttl:30d}")
	public Settlement settle(LocalDate businessDate) {
		this.runs.incrementAndGet();
		Settlement settlement = new Settlement(businessDate, "stl_" + UUID.randomUUID(), new BigDecimal("1250.00"));
		logger.info("Settled " + businessDate + " with the bank: " + settlement.reference());
		return settlement;
	}

	/** How often the settlement really ran (not replayed), for the sample's test. */
	int runs() {
		return this.runs.get();
	}

	public record Settlement(LocalDate businessDate, String reference, BigDecimal total) {
	}

}
// end::settlement-service[]
