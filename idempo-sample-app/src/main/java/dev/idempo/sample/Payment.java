package dev.idempo.sample;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * A payment.
 *
 * @param id the payment id
 * @param amount the amount
 * @param currency the ISO currency code
 * @param recipient who is paid
 * @param status the status
 * @param createdAt when it was created
 * @author idempo
 */
public record Payment(String id, BigDecimal amount, String currency, String recipient, String status,
		Instant createdAt) {
}
