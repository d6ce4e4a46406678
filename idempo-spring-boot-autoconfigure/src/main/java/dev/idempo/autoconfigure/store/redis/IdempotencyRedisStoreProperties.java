package dev.idempo.autoconfigure.store.redis;

import java.time.Duration;

import dev.idempo.autoconfigure.IdempotencyProperties;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the Redis store ({@code idempo.store.redis.*}), apart from
 * {@link IdempotencyProperties} as Spring Boot keeps each concern's properties in a class
 * of its own. Checked when bound: a value out of range fails start-up naming the
 * property.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.store.redis")
public class IdempotencyRedisStoreProperties implements Validator {

	/**
	 * Prefix of every Redis key the store writes. Keys are "<prefix>{<digest>}:lock" and
	 * "<prefix>{<digest>}:record". Must not contain '{' or '}'.
	 */
	private String keyPrefix = "idempo:";

	/**
	 * How many replicas must acknowledge a stored response (Redis WAIT) before it is
	 * sent. 0 (the least) does not wait. Fewer acknowledgements in time are counted, not
	 * failed: the handler has run, so the response is sent anyway. Lettuce only,
	 * standalone or Sentinel (not Redis Cluster, not Jedis); each complete then runs on a
	 * connection of its own, so enable Lettuce's pool.
	 */
	private int replicaAcknowledgements;

	/**
	 * Longest a stored response waits for replica acknowledgements before it is sent
	 * anyway. Positive (Redis would take 0 as forever); keep it below
	 * spring.data.redis.timeout.
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

	@Override
	public boolean supports(Class<?> type) {
		return IdempotencyRedisStoreProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		IdempotencyRedisStoreProperties properties = (IdempotencyRedisStoreProperties) target;
		if (properties.getKeyPrefix().indexOf('{') >= 0 || properties.getKeyPrefix().indexOf('}') >= 0) {
			errors.rejectValue("keyPrefix", "idempo.store.redis.key-prefix",
					"must not contain '{' or '}', which would replace the hash tag of every key");
		}
		if (properties.getReplicaAcknowledgements() < 0) {
			errors.rejectValue("replicaAcknowledgements", "idempo.store.redis.replica-acknowledgements",
					"must be 0 (do not wait) or more");
		}
		Duration timeout = properties.getReplicaAcknowledgementTimeout();
		if (timeout.isNegative() || timeout.isZero()) {
			errors.rejectValue("replicaAcknowledgementTimeout", "idempo.store.redis.replica-acknowledgement-timeout",
					"must be positive (Redis would wait forever for 0)");
		}
	}

}
