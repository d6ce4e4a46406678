package dev.idempo.testsupport;

import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import ch.qos.logback.classic.Level;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * The Kafka broker that tests run against: Spring Kafka's embedded KRaft broker, a real
 * Kafka broker (Kafka's own server classes, no Docker) in the test's JVM on a free port,
 * started on first use (about five seconds) and stopped when the JVM exits. Other JVMs
 * that a test starts reach it through {@link #bootstrapServers()}.
 * <p>
 * Its consumer groups accept session timeouts from one second (Kafka's default minimum is
 * six), so that a test sees a killed consumer leave its group in seconds.
 *
 * @author idempo
 */
public final class TestKafka {

	private static @Nullable EmbeddedKafkaKraftBroker broker;

	private TestKafka() {
	}

	/**
	 * The broker's address, starting it on first use.
	 * @return {@code host:port}
	 */
	public static synchronized String bootstrapServers() {
		EmbeddedKafkaKraftBroker running = broker;
		if (running == null) {
			long started = System.nanoTime();
			for (String logger : List.of("kafka", "org.apache.kafka", "state.change.logger")) {
				if (LoggerFactory.getLogger(logger) instanceof ch.qos.logback.classic.Logger logback) {
					logback.setLevel(Level.WARN);
				}
			}
			running = new EmbeddedKafkaKraftBroker(1, 1);
			running.brokerProperties(Map.of("group.min.session.timeout.ms", "1000",
					// created on first use of a group: one partition, not fifty
					"offsets.topic.num.partitions", "1",
					// a new group waits this long for more members before its first
					// assignment, so that all the threads of a consumer that start
					// together get their partitions in one assignment
					"group.initial.rebalance.delay.ms", "1000"));
			running.afterPropertiesSet();
			Runtime.getRuntime().addShutdownHook(new Thread(running::destroy, "kafka-test-broker-shutdown"));
			broker = running;
			System.out.printf("idempo tests use an embedded Kafka broker at %s (started in %d ms)%n",
					running.getBrokersAsString(), (System.nanoTime() - started) / 1_000_000);
		}
		return running.getBrokersAsString();
	}

	/**
	 * A random topic or group name.
	 * @param prefix its start
	 * @return the name
	 */
	public static String randomName(String prefix) {
		return prefix + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
	}

	/**
	 * An admin client of the broker; the caller closes it.
	 * @return the client
	 */
	public static Admin admin() {
		return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
	}

	/**
	 * Creates a topic.
	 * @param topic its name
	 * @param partitions how many partitions it has
	 */
	public static void createTopic(String topic, int partitions) {
		try (Admin admin = admin()) {
			admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("Could not create topic " + topic, ex.getCause());
		}
	}

	/**
	 * The offsets that a consumer group has committed, partitions without one at 0.
	 * @param group the group
	 * @param topic the topic
	 * @param partitions its number of partitions
	 * @return the committed offset of each partition
	 */
	public static Map<TopicPartition, Long> committedOffsets(String group, String topic, int partitions) {
		try (Admin admin = admin()) {
			Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get();
			Map<TopicPartition, Long> offsets = new HashMap<>();
			for (int partition = 0; partition < partitions; partition++) {
				TopicPartition topicPartition = new TopicPartition(topic, partition);
				OffsetAndMetadata offset = committed.get(topicPartition);
				offsets.put(topicPartition, (offset != null) ? offset.offset() : 0L);
			}
			return offsets;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("Could not read the offsets of group " + group, ex.getCause());
		}
	}

	/**
	 * The end offsets of a topic's partitions: the offset the next record will get.
	 * @param topic the topic
	 * @param partitions its number of partitions
	 * @return the end offset of each partition
	 */
	public static Map<TopicPartition, Long> endOffsets(String topic, int partitions) {
		Map<TopicPartition, OffsetSpec> request = new HashMap<>();
		for (int partition = 0; partition < partitions; partition++) {
			request.put(new TopicPartition(topic, partition), OffsetSpec.latest());
		}
		try (Admin admin = admin()) {
			Map<TopicPartition, ListOffsetsResultInfo> result = admin.listOffsets(request).all().get();
			Map<TopicPartition, Long> offsets = new HashMap<>();
			result.forEach((partition, info) -> offsets.put(partition, info.offset()));
			return offsets;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("Could not read the end offsets of " + topic, ex.getCause());
		}
	}

}
