package dev.idempo.web.transactional;

import org.junit.jupiter.api.Test;

/**
 * Transactional mode with JPA: the application's {@code JpaTransactionManager}, and a
 * handler that persists through a {@code @Transactional} service besides the JDBC one.
 */
abstract class JpaTransactionalHttpTests extends TransactionalHttpTests {

	@Override
	boolean jpa() {
		return true;
	}

	@Test
	void duplicatesOfOneKeyRunTheJpaHandlerOnce() throws Exception {
		duplicatesRunOnce("/tx/jpa/payments");
	}

}
