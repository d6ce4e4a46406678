package dev.idempo.store.jdbc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link JdbcStoreSchema}. The scripts themselves run on the real servers in
 * {@code JdbcLockingStoreTests}.
 *
 * @author idempo
 */
class JdbcStoreSchemaTests {

	@Test
	void theIndexIsNamedAfterTheTableWithoutItsSchema() {
		assertThat(JdbcStoreSchema.script("postgresql", "app.idempo_responses"))
			.contains("CREATE TABLE IF NOT EXISTS app.idempo_responses (")
			.contains("CREATE INDEX IF NOT EXISTS idempo_responses_expires_at_idx ON app.idempo_responses (expires_at)")
			.doesNotContain("app.idempo_responses_expires_at_idx");
		assertThat(JdbcStoreSchema.script("mysql", "app.idempo_responses"))
			.contains("CREATE TABLE IF NOT EXISTS app.idempo_responses (")
			.contains("INDEX idempo_responses_expires_at_idx (expires_at)");
	}

	@Test
	void namesThatContainTheDefaultNameAreReplacedOnce() {
		assertThat(JdbcStoreSchema.script("postgresql", "idempo_responses_v2"))
			.contains("CREATE TABLE IF NOT EXISTS idempo_responses_v2 (")
			.contains(
					"CREATE INDEX IF NOT EXISTS idempo_responses_v2_expires_at_idx ON idempo_responses_v2 (expires_at)")
			.doesNotContain("_v2_v2");
		assertThat(JdbcStoreSchema.script("mysql", "shop.idempo_responses_v2"))
			.contains("CREATE TABLE IF NOT EXISTS shop.idempo_responses_v2 (")
			.contains("INDEX idempo_responses_v2_expires_at_idx (expires_at)");
		assertThat(JdbcStoreSchema.script("postgresql", JdbcStoreSettings.DEFAULT_TABLE_NAME))
			.contains("CREATE INDEX IF NOT EXISTS idempo_responses_expires_at_idx ON idempo_responses (expires_at)");
	}

}
