package dev.idempo.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the Redis store ({@code idempo.store.redis.*}), apart from
 * {@link IdempotencyProperties} as Spring Boot keeps each concern's properties in a class
 * of its own.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.redis")
public class IdempotencyRedisStoreProperties {

	/**
	 * Prefix of every Redis key the store writes. Keys are "<prefix>{<digest>}:lock" and
	 * "<prefix>{<digest>}:record". Must not contain '{' or '}'.
	 */
	private String keyPrefix = "idempo:";

	/**
	 * How many replicas must acknowledge a stored response (Redis WAIT) before it is
	 * sent. 0 does not wait. Fewer acknowledgements in time are counted, not failed: the
	 * handler has run, so the response is sent anyway. Lettuce only, standalone or
	 * Sentinel (not Redis Cluster, not Jedis); each complete then runs on a connection of
	 * its own, so enable Lettuce's pool.
	 */
	private int replicaAcknowledgements;

	/**
	 * Longest a stored response waits for replica acknowledgements before it is sent
	 * anyway. Keep it below spring.data.redis.timeout.
	 */
	private Duration replicaAcknowledgementTimeout = Duration.ofSeconds(1);

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public int getReplicaAcknowledgements() {
		return this.replicaAcknowledgements;
	}

	public void setReplicaAcknowledgements(int replicaAcknowledgements) {
		this.replicaAcknowledgements = replicaAcknowledgements;
	}

	public Duration getReplicaAcknowledgementTimeout() {
		return this.replicaAcknowledgementTimeout;
	}

	public void setReplicaAcknowledgementTimeout(Duration replicaAcknowledgementTimeout) {
		this.replicaAcknowledgementTimeout = replicaAcknowledgementTimeout;
	}

}
