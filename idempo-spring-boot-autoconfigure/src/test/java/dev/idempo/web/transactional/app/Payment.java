package dev.idempo.web.transactional.app;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * A payment written through JPA; the table name is mapped to {@code test.payments-table}
 * by {@link PaymentsTableNaming}.
 */
@Entity
@Table(name = "payments")
public class Payment {

	@Id
	@GeneratedValue(strategy = GenerationType.IDENTITY)
	private Long id;

	/** Not unique: a second execution would show as a second row. */
	private String reference;

	private String body;

	protected Payment() {
	}

	Payment(String reference, String body) {
		this.reference = reference;
		this.body = body;
	}

	public String getReference() {
		return this.reference;
	}

	public String getBody() {
		return this.body;
	}

}
