package dev.idempo.benchmark;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.regex.Pattern;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.util.Assert;

/**
 * The payments table that {@code /pay-plain} and {@code /pay-idem} write one row (about
 * 300 bytes) to. Created on start-up if missing; {@code benchmark/run.sh} drops it.
 *
 * @author idempo
 */
@Component
class Payments implements InitializingBean {

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

	private final JdbcTemplate jdbc;

	private final String table;

	private final String insert;

	Payments(JdbcTemplate jdbc, @Value("${bench.payment-table:bench_payment}") String table) {
		Assert.isTrue(TABLE_NAME.matcher(table).matches(), () -> "Invalid bench.payment-table '" + table + "'");
		this.jdbc = jdbc;
		this.table = table;
		this.insert = "INSERT INTO " + table
				+ " (payment_id, reference, amount, currency, recipient, recipient_iban, description, metadata,"
				+ " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	}

	@Override
	public void afterPropertiesSet() {
		String product = this.jdbc
			.execute((ConnectionCallback<String>) (connection) -> connection.getMetaData().getDatabaseProductName());
		boolean postgres = product != null && product.toLowerCase().contains("postgres");
		String id = postgres ? "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
				: "id BIGINT AUTO_INCREMENT PRIMARY KEY";
		String timestamp = postgres ? "TIMESTAMP WITH TIME ZONE" : "DATETIME(6)";
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS " + this.table + " (" + id
				+ ", payment_id VARCHAR(40) NOT NULL, reference VARCHAR(64) NOT NULL, amount BIGINT NOT NULL,"
				+ " currency CHAR(3) NOT NULL, recipient VARCHAR(128) NOT NULL, recipient_iban VARCHAR(34) NOT NULL,"
				+ " description VARCHAR(255) NOT NULL, metadata VARCHAR(255) NOT NULL, created_at " + timestamp
				+ " NOT NULL)");
	}

	void insert(String id, PaymentRequest request, Instant createdAt) {
		this.jdbc.update(this.insert, id, request.reference(), request.amount(), request.currency(),
				request.recipient(), request.recipientIban(), request.description(), String.valueOf(request.metadata()),
				Timestamp.from(createdAt));
	}

}
