package dev.idempo.benchmark;

import java.util.Map;

/**
 * The request body every measured endpoint reads (about 300 bytes of JSON).
 *
 * @param reference the client's reference
 * @param amount the amount in minor units
 * @param currency the ISO currency code
 * @param recipient who is paid
 * @param recipientIban the recipient's account
 * @param description what the payment is for
 * @param metadata the client's metadata
 * @author idempo
 */
public record PaymentRequest(String reference, long amount, String currency, String recipient, String recipientIban,
		String description, Map<String, String> metadata) {
}
