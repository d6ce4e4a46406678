package dev.idempo.sample;

import java.math.BigDecimal;

/**
 * What a client sends to create a payment or a transfer.
 *
 * @param amount the amount, positive
 * @param currency the ISO currency code
 * @param recipient who is paid
 * @author idempo
 */
public record PaymentRequest(BigDecimal amount, String currency, String recipient) {
}
