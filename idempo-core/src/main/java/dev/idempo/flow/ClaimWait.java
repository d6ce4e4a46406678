package dev.idempo.flow;

import java.time.Duration;

/**
 * The pauses between claims of a key that another call holds, while a claim may wait for
 * it ({@code idempo.conflict.wait-timeout}): 10 ms, doubling up to 200 ms, never past the
 * wait's end. The blocking face of the flow sleeps them, the reactive face waits them on
 * a timer; both take them from here, so that they wait alike.
 *
 * @author idempo
 */
final class ClaimWait {

	private static final long FIRST_PAUSE_MILLIS = 10;

	private static final long LONGEST_PAUSE_MILLIS = 200;

	private final long deadline;

	private long pauseMillis = FIRST_PAUSE_MILLIS;

	private ClaimWait(long deadline) {
		this.deadline = deadline;
	}

	/**
	 * Starts waiting now.
	 * @param wait how long a claim may wait in all; zero for never
	 * @return the wait
	 */
	static ClaimWait of(Duration wait) {
		return new ClaimWait(System.nanoTime() + wait.toNanos());
	}

	/**
	 * The pause before the next claim. Not thread-safe: one claim's attempts follow one
	 * another.
	 * @return milliseconds to pause, or {@code -1} if the wait is over and the key's
	 * being in progress is the answer
	 */
	long nextPauseMillis() {
		long remainingMillis = (this.deadline - System.nanoTime()) / 1_000_000;
		if (remainingMillis <= 0) {
			return -1;
		}
		long pause = Math.min(this.pauseMillis, remainingMillis);
		this.pauseMillis = Math.min(this.pauseMillis * 2, LONGEST_PAUSE_MILLIS);
		return pause;
	}

}
