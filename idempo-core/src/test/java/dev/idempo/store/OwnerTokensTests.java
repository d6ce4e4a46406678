package dev.idempo.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OwnerTokens}: unique across threads, and across instances by their random
 * prefix.
 *
 * @author idempo
 */
class OwnerTokensTests {

	@Test
	void tokensOfConcurrentThreadsNeverRepeat() throws InterruptedException {
		int threads = 8;
		int each = 5_000;
		Set<String> tokens = ConcurrentHashMap.newKeySet();
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> started = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			Thread thread = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				for (int j = 0; j < each; j++) {
					tokens.add(OwnerTokens.next());
				}
			});
			thread.start();
			started.add(thread);
		}
		start.countDown();
		for (Thread thread : started) {
			thread.join();
		}
		assertThat(tokens).hasSize(threads * each);
	}

	@Test
	void tokensShareThisInstancesRandomPrefix() {
		String first = OwnerTokens.next();
		String second = OwnerTokens.next();
		assertThat(first).matches("[0-9a-f]{24}-[0-9a-f]+");
		assertThat(first.substring(0, 25)).isEqualTo(second.substring(0, 25));
		assertThat(first).isNotEqualTo(second);
	}

}
