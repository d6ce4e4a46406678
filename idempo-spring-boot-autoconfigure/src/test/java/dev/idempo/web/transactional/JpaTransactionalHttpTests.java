package dev.idempo.web.transactional;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import dev.idempo.web.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactional mode with JPA: the application's {@code JpaTransactionManager}, and a
 * handler that persists through a {@code @Transactional} service besides the JDBC one.
 */
abstract class JpaTransactionalHttpTests extends TransactionalHttpTests {

	@Test
	void duplicatesOfOneKeyRunTheJpaHandlerOnce() throws Exception {
		duplicatesRunOnce("/tx/jpa/payments");
	}

	/**
	 * A write that fails only when JPA flushes (a reference longer than its column) fails
	 * the handler before its body is written: the application's error, not a failed
	 * commit; nothing is kept and the key is free.
	 */
	@Test
	void writeFailingAtTheFlushFailsTheHandlerAndFreesTheKey() {
		String key = TestHttp.newKey();
		String tooLong = "r".repeat(100);
		HttpResponse<byte[]> failed = post("/tx/jpa/payments", key, tooLong, null);
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(TestHttp.text(failed)).doesNotContain("commit-failed");
		assertThat(payments(tooLong)).isZero();
		assertThat(records(key)).isZero();
		String reference = reference();
		assertThat(post("/tx/jpa/payments", key, reference, null).statusCode()).isEqualTo(201);
		assertThat(payments(reference)).isEqualTo(1);
	}

}
