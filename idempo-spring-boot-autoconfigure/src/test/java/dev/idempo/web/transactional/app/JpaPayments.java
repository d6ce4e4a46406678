package dev.idempo.web.transactional.app;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.hibernate.boot.model.naming.PhysicalNamingStrategy;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.Transactional;

/**
 * Payments through JPA, in a {@code @Transactional} service with the default propagation,
 * as an application writes them; only with {@code test.jpa=true}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("test.jpa")
class JpaPayments {

	@Bean
	PhysicalNamingStrategy paymentsTableNaming(@Value("${test.payments-table}") String table) {
		return new PaymentsTableNaming(table);
	}

	@Bean
	PaymentService paymentService() {
		return new PaymentService();
	}

	/** Persists payments; joins the transaction idempo began. */
	static class PaymentService {

		@PersistenceContext
		private EntityManager entityManager;

		@Transactional
		public void create(String reference, String body) {
			this.entityManager.persist(new Payment(reference, body));
		}

	}

}
