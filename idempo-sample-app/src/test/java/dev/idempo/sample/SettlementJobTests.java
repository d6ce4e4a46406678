package dev.idempo.sample;

import java.time.LocalDate;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduled settlement settles each business date once, however often the job runs.
 *
 * @author idempo
 */
@SpringBootTest(webEnvironment = WebEnvironment.NONE, properties = "sample.settlement-interval=1h")
class SettlementJobTests {

	@Autowired
	SettlementJob job;

	@Autowired
	Settlements settlements;

	@Test
	void theJobSettlesEachBusinessDateOnce() {
		int before = this.settlements.runs();
		this.job.settleYesterday();
		this.job.settleYesterday();
		this.job.settleYesterday();
		assertThat(this.settlements.runs()).isEqualTo(before + 1);
	}

	@Test
	void everyRunOfADateGetsTheSameSettlement() {
		LocalDate date = LocalDate.of(2026, 1, 15);
		int before = this.settlements.runs();
		Settlements.Settlement first = this.settlements.settle(date);
		Settlements.Settlement again = this.settlements.settle(date);
		assertThat(again).isEqualTo(first);
		assertThat(this.settlements.settle(date.plusDays(1)).reference()).isNotEqualTo(first.reference());
		assertThat(this.settlements.runs()).isEqualTo(before + 2);
	}

}
