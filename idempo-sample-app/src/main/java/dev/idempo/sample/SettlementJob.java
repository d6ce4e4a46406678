package dev.idempo.sample;

import java.time.Clock;
import java.time.LocalDate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

// tag::scheduled-job[]
/**
 * Settles yesterday every {@code sample.settlement-interval}. Every run after the first
 * of a day gets the stored settlement back: the bank is called once per business date.
 */
@Component
public class SettlementJob {

	private static final Log logger = LogFactory.getLog(SettlementJob.class);

	private final Settlements settlements;

	private final Clock clock;

	public SettlementJob(Settlements settlements, Clock clock) {
		this.settlements = settlements;
		this.clock = clock;
	}

	@Scheduled(fixedDelayString = "${sample.settlement-interval:1m}", initialDelayString = "5s")
	public void settleYesterday() {
		LocalDate businessDate = LocalDate.now(this.clock).minusDays(1);
		Settlements.Settlement settlement = this.settlements.settle(businessDate);
		logger.info("Settlement of " + businessDate + ": " + settlement.reference());
	}

}
// end::scheduled-job[]
