package dev.idempo.web;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link BufferBudget}: the bytes held in memory across requests.
 *
 * @author idempo
 */
class BufferBudgetTests {

	@Test
	void reservationsUpToTheMaximumAreGrantedAndBeyondRefused() {
		BufferBudget budget = new BufferBudget(100);
		assertThat(budget.tryReserve(60)).isTrue();
		assertThat(budget.tryReserve(40)).isTrue();
		assertThat(budget.tryReserve(1)).isFalse();
		assertThat(budget.used()).isEqualTo(100);
		assertThat(budget.refused()).isEqualTo(1);
		budget.release(40);
		assertThat(budget.tryReserve(40)).isTrue();
	}

	@Test
	void aForcedReservationIsCountedAndCrowdsOutOthers() {
		BufferBudget budget = new BufferBudget(10);
		budget.reserve(25);
		assertThat(budget.used()).isEqualTo(25);
		assertThat(budget.tryReserve(1)).isFalse();
		budget.release(25);
		assertThat(budget.tryReserve(10)).isTrue();
	}

	@Test
	void aHugeReservationDoesNotOverflow() {
		BufferBudget budget = new BufferBudget(Long.MAX_VALUE);
		assertThat(budget.tryReserve(Long.MAX_VALUE - 1)).isTrue();
		assertThat(budget.tryReserve(2)).isFalse();
		assertThat(budget.used()).isEqualTo(Long.MAX_VALUE - 1);
	}

	@Test
	void concurrentReservationsNeverExceedTheMaximum() throws InterruptedException {
		BufferBudget budget = new BufferBudget(1_000);
		AtomicInteger granted = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			Thread thread = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				for (int j = 0; j < 1_000; j++) {
					if (budget.tryReserve(7)) {
						granted.incrementAndGet();
					}
				}
			});
			thread.start();
			threads.add(thread);
		}
		start.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(granted.get()).as("whole reservations of 7 that fit in 1000").isEqualTo(142);
		assertThat(budget.used()).isEqualTo(994);
		assertThat(budget.refused()).isEqualTo(8 * 1_000 - 142);
	}

	@Test
	void theMaximumMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new BufferBudget(0));
	}

}
