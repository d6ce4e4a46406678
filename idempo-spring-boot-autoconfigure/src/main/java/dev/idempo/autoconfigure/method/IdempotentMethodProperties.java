package dev.idempo.autoconfigure.method;

import dev.idempo.method.IdempotentMethodAdvisor;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Idempotent methods outside the web layer (@Idempotent with a key) and the
 * IdempotencyTemplate.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.method")
public class IdempotentMethodProperties {

	/**
	 * Whether a key used again with other arguments throws IdempotencyKeyReusedException
	 * instead of returning the result stored for the first arguments (compared as a
	 * digest of their JSON; infrastructure arguments such as a Kafka Acknowledgment are
	 * left out).
	 */
	private boolean verifyArguments = true;

	/**
	 * Order of the advisor of @Idempotent methods; by default before @Transactional and
	 * Spring Retry's @Retryable, which then run inside the claim.
	 */
	private int advisorOrder = IdempotentMethodAdvisor.DEFAULT_ORDER;

	public boolean isVerifyArguments() {
		return this.verifyArguments;
	}

	public void setVerifyArguments(boolean verifyArguments) {
		this.verifyArguments = verifyArguments;
	}

	public int getAdvisorOrder() {
		return this.advisorOrder;
	}

	public void setAdvisorOrder(int advisorOrder) {
		this.advisorOrder = advisorOrder;
	}

}
