package dev.idempo.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.idempo.chaos.ChaosClient.KeyPlan;
import dev.idempo.chaos.History.Answer;
import dev.idempo.chaos.History.Execution;
import dev.idempo.chaos.History.Kill;
import dev.idempo.chaos.History.StoreRestart;
import dev.idempo.chaos.HistoryChecker.Verdict;
import dev.idempo.testsupport.ApplicationProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One chaos run against a store: {@value #INSTANCES} instances of
 * {@link ChaosApplication}, each a JVM of its own, share a store server of the test's own
 * ({@link ChaosStore}). For {@link #LOAD} a generator sends a new key every
 * {@value #KEY_INTERVAL_MILLIS} ms, each as two concurrent requests plus a third some
 * time later (to be replayed), through the retrying {@link ChaosClient}; on the SQL
 * stores half of the keys go to the transactional endpoint. Meanwhile the test injects
 * {@value #KILLS} SIGKILLs of random instances (each started again at once, in a new JVM)
 * and {@value #RESTARTS} real restarts of the store server, in an order and at times
 * drawn from the run's seed. Once every request has its final answer, the instances are
 * killed, and {@link HistoryChecker} judges the durable effects (the effect logs and the
 * business rows) against what the client saw and the faults. The run fails on any
 * violation the checker finds, and if it injected fewer faults than planned.
 * <p>
 * The seed is printed; {@code -Dchaos.seed=<n>} repeats a run's plan (the keys, the
 * faults and their times; not the threads' interleaving). Everything of a run is in
 * {@code target/chaos/<store>-<time>/}: the instances' logs, the effect logs and
 * {@code history.txt}. A subclass per store; the memory store is not one, since it
 * protects one JVM only and several instances cannot share it.
 *
 * @author idempo
 */
abstract class ChaosRuns {

	static final int INSTANCES = 3;

	static final Duration LOAD = Duration.ofSeconds(20);

	static final long KEY_INTERVAL_MILLIS = 50;

	static final int KILLS = 4;

	static final int RESTARTS = 2;

	/** How long after the load the client may still retry a key. */
	private static final Duration DRAIN = Duration.ofSeconds(45);

	private static final Duration FAULT_WAIT = Duration.ofSeconds(60);

	/**
	 * The store server of this run, not started.
	 * @return the store
	 */
	abstract ChaosStore createStore();

	@Test
	@Timeout(value = 5, unit = TimeUnit.MINUTES)
	void duplicatesRetriesKillsAndStoreRestartsNeverBreakTheContract() throws Exception {
		long seed = Long.getLong("chaos.seed", new Random().nextLong());
		long began = System.nanoTime();
		try (ChaosStore store = createStore()) {
			Path directory = Files.createDirectories(
					Path.of("target", "chaos", store.name() + "-" + System.currentTimeMillis()).toAbsolutePath());
			System.out.printf("chaos %s: seed %d, files in %s%n", store.name(), seed, directory);
			Run run = new Run(store, directory, seed);
			Exception broken = null;
			try {
				run.execute();
			}
			catch (Exception ex) {
				// the history so far is still the evidence: written below, then thrown
				broken = ex;
			}
			finally {
				run.stopInstances();
			}
			History history = run.history();
			Verdict verdict = HistoryChecker.check(history);
			String summary = verdict.summary()
					+ String.format(", seed %d, in %.1f s", seed, (System.nanoTime() - began) / 1e9);
			System.out.println(summary);
			run.writeHistory(history, verdict, summary);
			if (broken != null) {
				throw broken;
			}
			assertThat(verdict.violations())
				.as("violations of the contract (seed %d, files in %s); %s", seed, directory, summary)
				.isEmpty();
			assertThat(verdict.kills()).as("kills").isEqualTo(KILLS);
			assertThat(verdict.restarts()).as("store restarts").isEqualTo(RESTARTS);
			assertThat(verdict.keys()).as("keys").isGreaterThan(150);
			assertThat(verdict.replays()).as("replays").isPositive();
			assertThat(verdict.executions()).as("executions").isGreaterThanOrEqualTo(verdict.keys());
			if (store.transactional()) {
				assertThat(verdict.transactionalKeys()).as("transactional keys").isPositive();
			}
		}
	}

	/** The state of one run. */
	private static final class Run {

		private final ChaosStore store;

		private final Path directory;

		private final Random faults;

		private final Random keys;

		private final List<ApplicationProcess> instances = new ArrayList<>();

		private final ChaosClient client;

		private final Map<String, Boolean> sentKeys = Collections.synchronizedMap(new LinkedHashMap<>());

		private final List<Kill> kills = new ArrayList<>();

		private final List<StoreRestart> restarts = new ArrayList<>();

		private final List<Future<?>> restartedInstances = new ArrayList<>();

		private final List<String> faultLog = new ArrayList<>();

		Run(ChaosStore store, Path directory, long seed) {
			this.store = store;
			this.directory = directory;
			this.faults = new Random(seed);
			this.keys = new Random(seed + 1);
			List<String> arguments = new ArrayList<>(List.of("--spring.main.banner-mode=off",
					"--spring.jmx.enabled=false", "--chaos.effect-dir=" + directory.resolve("effects")));
			arguments.addAll(store.applicationArguments());
			for (int i = 0; i < INSTANCES; i++) {
				this.instances.add(new ApplicationProcess(ChaosApplication.class, String.valueOf((char) ('a' + i)),
						directory, arguments));
			}
			this.client = new ChaosClient(this.instances);
		}

		void execute() throws Exception {
			long starting = System.nanoTime();
			// all at once, and with the store's server, whose port is fixed already (the
			// application starts while its store is down): the machine has few cores, but
			// start-up waits on I/O too
			this.instances.forEach(ApplicationProcess::start);
			this.store.start(this.directory.resolve("store"));
			long storeUp = System.nanoTime();
			this.instances.forEach(ApplicationProcess::awaitReady);
			System.out.printf("chaos %s: store up in %d ms, %d instances ready in %d ms%n", this.store.name(),
					TimeUnit.NANOSECONDS.toMillis(storeUp - starting), INSTANCES,
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - starting));
			ExecutorService clients = Executors.newFixedThreadPool(48);
			ScheduledExecutorService generator = Executors.newSingleThreadScheduledExecutor();
			ExecutorService readiness = Executors.newCachedThreadPool();
			List<Future<?>> requests = Collections.synchronizedList(new ArrayList<>());
			try {
				long loadStart = System.nanoTime();
				long loadEnd = loadStart + LOAD.toNanos();
				long deadline = loadEnd + DRAIN.toNanos();
				generator.scheduleAtFixedRate(() -> {
					if (System.nanoTime() < loadEnd) {
						sendKey(clients, generator, requests, deadline);
					}
				}, 0, KEY_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
				injectFaults(loadStart, readiness);
				parkUntil(loadEnd);
				generator.shutdown();
				// the delayed third requests are still to be sent
				if (!generator.awaitTermination(10, TimeUnit.SECONDS)) {
					throw new IllegalStateException("The generator did not end");
				}
				for (Future<?> request : List.copyOf(requests)) {
					request.get(Math.max(1, deadline - System.nanoTime()) + TimeUnit.SECONDS.toNanos(20),
							TimeUnit.NANOSECONDS);
				}
				for (Future<?> restarted : this.restartedInstances) {
					// an instance started by the last kills may still be starting: it is
					// killed with the others, and fails the run then if it exited on its
					// own
					if (restarted.isDone()) {
						restarted.get();
					}
				}
				System.out.printf("chaos %s: load of %d s and its drain took %d ms%n", this.store.name(),
						LOAD.toSeconds(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - loadStart));
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("A client or an instance's start failed: " + ex.getCause(),
						ex.getCause());
			}
			catch (TimeoutException ex) {
				throw new IllegalStateException("A client did not end in time", ex);
			}
			finally {
				generator.shutdownNow();
				clients.shutdownNow();
				readiness.shutdownNow();
			}
		}

		private void sendKey(ExecutorService clients, ScheduledExecutorService generator, List<Future<?>> requests,
				long deadline) {
			KeyPlan key = nextKey();
			this.sentKeys.put(key.key(), key.transactional());
			requests.add(clients.submit(() -> this.client.send(key, deadline)));
			requests.add(clients.submit(() -> this.client.send(key, deadline)));
			long later = 300 + this.keys.nextInt(2700);
			generator.schedule(() -> requests.add(clients.submit(() -> this.client.send(key, deadline))), later,
					TimeUnit.MILLISECONDS);
		}

		private KeyPlan nextKey() {
			boolean transactional = this.store.transactional() && this.keys.nextBoolean();
			int statusDraw = this.keys.nextInt(10);
			int status = (statusDraw < 7) ? 201 : (statusDraw == 7) ? 200 : (statusDraw == 8) ? 202 : 451;
			int sizeDraw = this.keys.nextInt(10);
			int size = (sizeDraw < 5) ? this.keys.nextInt(200)
					: (sizeDraw < 9) ? 200 + this.keys.nextInt(4000) : 4000 + this.keys.nextInt(36000);
			return new KeyPlan(new UUID(this.keys.nextLong(), this.keys.nextLong()).toString(), transactional, status,
					size);
		}

		/**
		 * The faults, one per slot of the load, at a random time in their slot, in a
		 * random order.
		 */
		private void injectFaults(long loadStart, ExecutorService readiness) throws Exception {
			List<Boolean> plan = new ArrayList<>();
			for (int i = 0; i < KILLS + RESTARTS; i++) {
				plan.add(i < KILLS);
			}
			Collections.shuffle(plan, this.faults);
			long slot = LOAD.toNanos() / plan.size();
			for (int i = 0; i < plan.size(); i++) {
				parkUntil(loadStart + i * slot + (long) (slot * (0.2 + 0.6 * this.faults.nextDouble())));
				if (plan.get(i)) {
					kill(readiness);
				}
				else {
					restartStore();
				}
			}
		}

		private void kill(ExecutorService readiness) {
			List<ApplicationProcess> ready = awaitReadyInstances(2);
			ApplicationProcess victim = ready.get(this.faults.nextInt(ready.size()));
			String incarnation = victim.incarnationName();
			long at = System.nanoTime();
			this.kills.add(new Kill(incarnation, at));
			victim.kill();
			this.faultLog.add(at + " SIGKILL " + incarnation);
			victim.start();
			this.restartedInstances.add(readiness.submit(victim::awaitReady));
		}

		private void restartStore() throws Exception {
			long stop = System.nanoTime();
			this.store.stop();
			long stopped = System.nanoTime();
			// down for a while: requests meanwhile find no store
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200 + this.faults.nextInt(800)));
			this.store.startAgain();
			long up = System.nanoTime();
			this.restarts.add(new StoreRestart(stop, up));
			this.faultLog.add(stop + " store stop; stopped at " + stopped + ", up again at " + up);
		}

		/**
		 * Polls until at least {@code count} instances serve, so that a kill never leaves
		 * the client without an instance.
		 */
		private List<ApplicationProcess> awaitReadyInstances(int count) {
			long deadline = System.nanoTime() + FAULT_WAIT.toNanos();
			while (true) {
				List<ApplicationProcess> ready = this.instances.stream().filter((i) -> i.port() != 0).toList();
				if (ready.size() >= count) {
					return ready;
				}
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(
							"Fewer than " + count + " instances ready after " + FAULT_WAIT + ":\n"
									+ this.instances.stream()
										.map(ApplicationProcess::logTail)
										.collect(Collectors.joining("\n")));
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
		}

		void stopInstances() {
			for (ApplicationProcess instance : this.instances) {
				if (instance.isAlive()) {
					instance.kill();
				}
			}
		}

		History history() {
			List<Execution> executions = new ArrayList<>(EffectLog.read(this.directory.resolve("effects")));
			executions.addAll(this.store.transactionalEffects());
			return new History(this.store.name(), this.store.semantics(), this.sentKeys, executions,
					this.client.answers(), this.client.gaveUp(), this.kills, this.restarts, this.client.traffic());
		}

		/** The faults and, per key, its executions and answers, for a person to read. */
		void writeHistory(History history, Verdict verdict, String summary) throws IOException {
			StringBuilder text = new StringBuilder(summary).append("\n\nfaults:\n");
			this.faultLog.forEach((line) -> text.append("  ").append(line).append('\n'));
			text.append("\nviolations:\n");
			verdict.violations().forEach((line) -> text.append("  ").append(line).append('\n'));
			Map<String, List<Execution>> executions = history.executions()
				.stream()
				.collect(Collectors.groupingBy(Execution::key));
			Map<String, List<Answer>> answers = history.answers().stream().collect(Collectors.groupingBy(Answer::key));
			text.append("\nkeys (executions: id, incarnation, received, began, marker; answers: sent, received,"
					+ " status, execution, replayed):\n");
			for (Map.Entry<String, Boolean> key : history.keys().entrySet()) {
				text.append(key.getKey()).append(key.getValue() ? " transactional" : "").append('\n');
				executions.getOrDefault(key.getKey(), List.of())
					.stream()
					.sorted(Comparator.comparingLong(Execution::startNanos))
					.forEach((e) -> text.append("  X ")
						.append(e.id())
						.append(' ')
						.append(e.incarnation())
						.append(' ')
						.append(e.receivedNanos())
						.append(' ')
						.append(e.startNanos())
						.append(' ')
						.append((e.marker() != null) ? e.marker().outcome() + "@" + e.marker().nanos() : "-")
						.append('\n'));
				answers.getOrDefault(key.getKey(), List.of())
					.forEach((a) -> text.append("  A ")
						.append(a.sentNanos())
						.append(' ')
						.append(a.receivedNanos())
						.append(' ')
						.append(a.status())
						.append(' ')
						.append(a.execution())
						.append(a.replayed() ? " replayed" : "")
						.append('\n'));
			}
			Files.writeString(this.directory.resolve("history.txt"), text, StandardCharsets.UTF_8);
		}

		/**
		 * Waits until a time of the run's plan; it shapes the load and orders nothing.
		 */
		private static void parkUntil(long nanoTime) {
			long left;
			while ((left = nanoTime - System.nanoTime()) > 0) {
				LockSupport.parkNanos(left);
			}
		}

	}

}
