package dev.idempo.kafka;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.idempo.kafka.PaymentsConsumerApplication.Deliveries;
import dev.idempo.testsupport.ApplicationProcess;
import dev.idempo.testsupport.SqlStoreProperties;
import dev.idempo.testsupport.TestDatabases.TestDatabase;
import dev.idempo.testsupport.TestKafka;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@code @Idempotent(key = ..., transactional = true)} on a {@code @KafkaListener}
 * against a real Kafka broker ({@link TestKafka}) and a real database, rows counted in
 * the database. One run covers every way Kafka delivers a message more than once:
 * <ol>
 * <li>the producer sends every payment twice, the two copies on different partitions, so
 * that the two listener threads can receive them at the same time;</li>
 * <li>one payment, sent once so that only its redelivery can write its row, fails after
 * its insert the first time, and the container's error handler redelivers it;</li>
 * <li>consumer A, a JVM of its own that commits no offsets while it runs, processes
 * everything; once the last payment's row has committed, A stops before its listener
 * returns, and the test kills it with SIGKILL: every record A processed is now committed
 * in the database and uncommitted in Kafka;</li>
 * <li>consumer B joins the group once A's session has expired, is assigned both
 * partitions, receives every uncommitted record again and commits each offset after its
 * listener returns; the run ends when the group's committed offsets reach the end of both
 * partitions.</li>
 * </ol>
 * With {@link PaymentListener} every payment has exactly one row, written by A; B
 * receives every record A left uncommitted, runs no listener body, and acknowledges them
 * all. The same run with {@link PlainPaymentListener}, the listener without the
 * annotation, leaves a row per delivery, so the first test can fail; that control does
 * not depend on the store, so it runs once, in {@link PostgresKafkaListenerTests}. A
 * subclass per database.
 * <p>
 * A chaos run (tagged {@code chaos}: {@code -Pchaos}, which CI runs after the plain
 * {@code verify}): a consumer JVM started, killed and replaced per run, over a minute per
 * database. The plain suite keeps what it rests on in one JVM:
 * {@code method/*TransactionalMethodTests} (the row and the record commit together or not
 * at all, one row from many threads with one key) and {@link KafkaErrorHandlingTests}
 * (duplicates and redeliveries on the embedded broker).
 */
@Tag("chaos")
abstract class KafkaListenerTests {

	private static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	private static final int PARTITIONS = 2;

	static final int PAYMENTS = 20;

	/** The payment whose first delivery fails; the producer sends it once. */
	private static final String FAILS_ONCE = "payment-5";

	/** The last payment sent: A is killed after its row committed. */
	static final String KILLED_AFTER = "payment-" + (PAYMENTS - 1);

	private static final Duration TIMEOUT = Duration.ofSeconds(120);

	private final List<Runnable> cleanups = new ArrayList<>();

	/** The server under test. */
	abstract TestDatabase database();

	/** {@code idempo.store.type}. */
	abstract String storeType();

	/** The platform of the shipped schema script. */
	abstract String schemaPlatform();

	/** The business table: no unique key on the payment id, so a second run shows. */
	abstract String businessTableDdl(String table);

	@AfterEach
	void cleanUp() {
		for (int i = this.cleanups.size() - 1; i >= 0; i--) {
			this.cleanups.get(i).run();
		}
	}

	@Test
	@Timeout(300)
	void everyPaymentHasOneRowThroughDuplicatesAFailureAndAConsumerKilledBeforeItsOffsetCommit() throws Exception {
		Run run = run("idempotent");
		assertThat(run.rows()).as("rows per payment").hasSize(PAYMENTS).allSatisfy((payment, instances) -> {
			assertThat(instances).as("rows of %s", payment).hasSize(1);
			assertThat(instances.get(0)).as("writer of %s", payment).isEqualTo("a#1");
		});
		assertThat(run.failedOnce()).as("the first delivery of %s failed", FAILS_ONCE).isTrue();
		assertThat(run.uncommittedAtKill()).as("records A left uncommitted").isGreaterThanOrEqualTo(1);
		assertThat(run.deliveriesToB()).as("records redelivered to B").isGreaterThanOrEqualTo(run.uncommittedAtKill());
		assertThat(run.executionsOnB()).as("listener bodies run on B").isZero();
	}

	Run run(String listener) throws Exception {
		long started = System.nanoTime();
		TestDatabase database = database();
		String recordTable = SqlStoreProperties.randomTable();
		String businessTable = "kafka_payments_" + recordTable.substring(recordTable.lastIndexOf('_') + 1);
		database.runScript(schemaPlatform(), recordTable);
		this.cleanups.add(() -> database.dropTable(recordTable));
		database.jdbc().execute(businessTableDdl(businessTable));
		this.cleanups.add(() -> database.dropTable(businessTable));
		String topic = TestKafka.randomName("payments");
		String group = TestKafka.randomName("payments-consumers");
		TestKafka.createTopic(topic, PARTITIONS);
		Path directory = Files.createDirectories(Path.of("target", "kafka-tests",
				getClass().getSimpleName() + "-" + listener + "-" + System.currentTimeMillis()));
		Path signals = Files.createDirectories(directory.resolve("signals"));

		Map<String, RecordMetadata> killedAfterCopies = sendEveryPaymentTwice(topic);

		List<String> arguments = new ArrayList<>();
		arguments.add("--spring.datasource.url=" + database.url());
		if (database.username() != null) {
			arguments.add("--spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			arguments.add("--spring.datasource.password=" + database.password());
		}
		arguments.add("--spring.autoconfigure.exclude=" + HIBERNATE);
		arguments.add("--spring.main.banner-mode=off");
		arguments.add("--spring.jmx.enabled=false");
		arguments.add("--logging.level.org.apache.kafka=warn");
		arguments.add("--logging.level.kafka=warn");
		arguments.add("--logging.level.state.change.logger=warn");
		arguments.add("--idempo.store.type=" + storeType());
		arguments.add("--idempo.store.jdbc.table-name=" + recordTable);
		arguments.add("--payments.listener=" + listener);
		arguments.add("--payments.bootstrap-servers=" + TestKafka.bootstrapServers());
		arguments.add("--payments.topic=" + topic);
		arguments.add("--payments.group=" + group);
		arguments.add("--payments.table=" + businessTable);
		arguments.add("--payments.signal-dir=" + signals.toAbsolutePath());

		List<String> argumentsOfA = new ArrayList<>(arguments);
		argumentsOfA.add("--payments.commit=never");
		argumentsOfA.add("--payments.fail-once=" + FAILS_ONCE);
		argumentsOfA.add("--payments.pause-after-commit=" + KILLED_AFTER);
		ApplicationProcess a = new ApplicationProcess(PaymentsConsumerApplication.class, "a", directory, argumentsOfA);
		this.cleanups.add(() -> {
			if (a.isAlive()) {
				a.kill();
			}
		});
		a.start();
		// B starts meanwhile, outside the group until A is dead: a member joining while A
		// lives would have A give up its partitions and commit their offsets
		List<String> argumentsOfB = new ArrayList<>(arguments);
		argumentsOfB.add("--payments.commit=per-record");
		argumentsOfB.add("--payments.listen-on-start=false");
		argumentsOfB.add("--" + ApplicationProcess.INSTANCE_PROPERTY + "=b#1");
		ConfigurableApplicationContext b = new SpringApplicationBuilder(PaymentsConsumerApplication.class)
			.web(WebApplicationType.NONE)
			.run(argumentsOfB.toArray(String[]::new));
		this.cleanups.add(b::close);
		awaitCondition(() -> {
			if (!a.isAlive()) {
				fail("Consumer A died:\n" + a.logTail());
			}
			return Files.exists(signals.resolve("committed-" + KILLED_AFTER))
					&& rowsByPayment(businessTable).size() == PAYMENTS;
		}, () -> "consumer A to commit a row for every payment and pause after " + KILLED_AFTER + "\n" + a.logTail());
		a.kill();
		long killedAt = System.nanoTime();
		Map<TopicPartition, Long> committedAtKill = TestKafka.committedOffsets(group, topic, PARTITIONS);
		Map<TopicPartition, Long> end = TestKafka.endOffsets(topic, PARTITIONS);
		for (RecordMetadata copy : killedAfterCopies.values()) {
			TopicPartition partition = new TopicPartition(copy.topic(), copy.partition());
			assertThat(committedAtKill.get(partition)).as("committed offset of %s when A was killed", partition)
				.isLessThanOrEqualTo(copy.offset());
		}
		int uncommitted = 0;
		for (TopicPartition partition : end.keySet()) {
			uncommitted += (int) (end.get(partition) - committedAtKill.get(partition));
		}

		b.getBean(KafkaListenerEndpointRegistry.class).start();
		awaitCondition(() -> TestKafka.committedOffsets(group, topic, PARTITIONS).equals(end),
				() -> "consumer B to commit the group's offsets to the end " + end + ", committed "
						+ TestKafka.committedOffsets(group, topic, PARTITIONS));
		int deliveriesToB = b.getBean(Deliveries.class).count();
		int executionsOnB = b.getBean(Payments.class).executions();
		b.close();
		Map<String, List<String>> rows = rowsByPayment(businessTable);
		System.out.printf(
				"%s (%s listener): %d records, %d left uncommitted by A, %d deliveries to B, %d bodies run on B, "
						+ "%d rows for %d payments; B took over and committed %d ms after the kill, run %d ms%n",
				getClass().getSimpleName(), listener, 2 * PAYMENTS - 1, uncommitted, deliveriesToB, executionsOnB,
				rows.values().stream().mapToInt(List::size).sum(), rows.size(),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
		return new Run(rows, Files.exists(signals.resolve("failed-" + FAILS_ONCE)), uncommitted, deliveriesToB,
				executionsOnB);
	}

	/**
	 * Sends each payment twice, the copies on different partitions, but
	 * {@link #FAILS_ONCE} once; the payments in order, so that {@link #KILLED_AFTER} is
	 * the last record of both partitions.
	 * @return where the two copies of {@link #KILLED_AFTER} landed
	 */
	private static Map<String, RecordMetadata> sendEveryPaymentTwice(String topic)
			throws InterruptedException, ExecutionException {
		Map<String, RecordMetadata> killedAfterCopies = new LinkedHashMap<>();
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers(),
						ProducerConfig.ACKS_CONFIG, "all"),
				new StringSerializer(), new StringSerializer())) {
			for (int i = 0; i < PAYMENTS; i++) {
				String payment = "payment-" + i;
				String payload = "{\"amount\":" + (100 + i) + "}";
				int copies = payment.equals(FAILS_ONCE) ? 1 : 2;
				for (int copy = 0; copy < copies; copy++) {
					RecordMetadata sent = producer
						.send(new ProducerRecord<>(topic, (i + copy) % PARTITIONS, payment, payload))
						.get();
					if (payment.equals(KILLED_AFTER)) {
						killedAfterCopies.put("copy " + copy, sent);
					}
				}
			}
		}
		return killedAfterCopies;
	}

	/** The instances that wrote each payment's rows, in the order they were written. */
	private Map<String, List<String>> rowsByPayment(String table) {
		Map<String, List<String>> rows = new TreeMap<>();
		database().jdbc().query("SELECT payment_id, instance FROM " + table + " ORDER BY id", (rs) -> {
			rows.computeIfAbsent(rs.getString(1), (payment) -> new ArrayList<>()).add(rs.getString(2));
		});
		return rows;
	}

	private static void awaitCondition(BooleanSupplier condition, Supplier<String> what) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Timed out after " + TIMEOUT + " waiting for " + what.get());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
	}

	/**
	 * What a run left: the rows, and what the consumers saw.
	 *
	 * @param rows the writers of each payment's rows
	 * @param failedOnce whether the failing payment's first delivery failed
	 * @param uncommittedAtKill records after the group's committed offsets when A died
	 * @param deliveriesToB records the container handed to B's listener
	 * @param executionsOnB listener bodies B ran
	 */
	record Run(Map<String, List<String>> rows, boolean failedOnce, int uncommittedAtKill, int deliveriesToB,
			int executionsOnB) {
	}

}
