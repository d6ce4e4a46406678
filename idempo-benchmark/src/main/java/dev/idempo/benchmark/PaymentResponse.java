package dev.idempo.benchmark;

import java.util.List;
import java.util.Map;

/**
 * The response body every measured endpoint returns (about 1 KiB of JSON).
 *
 * @param id the payment id
 * @param object the object type
 * @param status the status
 * @param reference the client's reference
 * @param amount the amount in minor units
 * @param fee the fee in minor units
 * @param net the amount less the fee
 * @param currency the ISO currency code
 * @param recipient who is paid
 * @param recipientIban the recipient's account
 * @param description what the payment is for
 * @param metadata the client's metadata
 * @param createdAt when it was created
 * @param expectedSettlement when it is expected to settle
 * @param events what happened to the payment so far
 * @param links related resources
 * @author idempo
 */
public record PaymentResponse(String id, String object, String status, String reference, long amount, long fee,
		long net, String currency, String recipient, String recipientIban, String description,
		Map<String, String> metadata, String createdAt, String expectedSettlement, List<Event> events,
		Map<String, String> links) {

	/**
	 * One step in a payment's life.
	 *
	 * @param type what happened
	 * @param at when
	 * @param detail a human-readable detail
	 */
	public record Event(String type, String at, String detail) {
	}

}
