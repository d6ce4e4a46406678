package dev.idempo;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.Test;

import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.web.WebImportingTheJdbcStore;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layering of idempo's packages, written down so that a change which undoes it fails
 * the build (CONTRIBUTING.md says the same in prose). From the bottom:
 * <ul>
 * <li>{@code store}: the store SPI ({@code LockingStore}, {@code TransactionalStore} and
 * their values); depends on no other idempo package.</li>
 * <li>{@code store.jdbc}, {@code store.redis}, {@code store.memory}: one store each;
 * implement the SPI and know nothing else of idempo, not even each other. Only
 * {@code autoconfigure} names them.</li>
 * <li>{@code core}: what every entry point shares (keys, fingerprints, settings,
 * listeners, lease renewal); depends on the SPI.</li>
 * <li>{@code transaction}: transactional mode, shared by handlers and methods; reaches
 * SQL only through {@code TransactionalStore}.</li>
 * <li>{@code web}, {@code method}: the two entry points; depend on {@code core},
 * {@code store} and {@code transaction} (and the annotations and exceptions of the root
 * package), never on a store implementation nor on each other.</li>
 * <li>{@code client}, {@code actuate}, {@code openapi}: leaves that use {@code core} (and
 * the SPI, or the web layer's declarations).</li>
 * <li>{@code autoconfigure}: wires everything; nothing depends on it.</li>
 * </ul>
 * The root package ({@code dev.idempo}: {@code @Idempotent}, its exceptions and
 * {@code IdempotencyTemplate}) is the public API; the template is a facade over the
 * method layer, whose calls throw the root package's exceptions, so the two are allowed
 * to use each other.
 *
 * @author idempo
 */
class ArchitectureTests {

	private static final JavaClasses MAIN = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.idempo");

	static ArchRule layers() {
		return layeredArchitecture().consideringOnlyDependenciesInLayers()
			.ensureAllClassesAreContainedInArchitecture()
			.layer("API")
			.definedBy("dev.idempo")
			.layer("Store SPI")
			.definedBy("dev.idempo.store")
			.layer("JDBC store")
			.definedBy("dev.idempo.store.jdbc..")
			.layer("Redis store")
			.definedBy("dev.idempo.store.redis..")
			.layer("Memory store")
			.definedBy("dev.idempo.store.memory..")
			.layer("Core")
			.definedBy("dev.idempo.core..")
			.layer("Transaction")
			.definedBy("dev.idempo.transaction..")
			.layer("Web")
			.definedBy("dev.idempo.web..")
			.layer("Method")
			.definedBy("dev.idempo.method..")
			.layer("Client")
			.definedBy("dev.idempo.client..")
			.layer("Actuate")
			.definedBy("dev.idempo.actuate..")
			.layer("OpenAPI")
			.definedBy("dev.idempo.openapi..")
			.layer("Autoconfigure")
			.definedBy("dev.idempo.autoconfigure..")
			.whereLayer("Store SPI")
			.mayNotAccessAnyLayer()
			.whereLayer("JDBC store")
			.mayOnlyAccessLayers("Store SPI")
			.whereLayer("Redis store")
			.mayOnlyAccessLayers("Store SPI")
			.whereLayer("Memory store")
			.mayOnlyAccessLayers("Store SPI")
			.whereLayer("JDBC store")
			.mayOnlyBeAccessedByLayers("Autoconfigure")
			.whereLayer("Redis store")
			.mayOnlyBeAccessedByLayers("Autoconfigure")
			.whereLayer("Memory store")
			.mayOnlyBeAccessedByLayers("Autoconfigure")
			.whereLayer("Core")
			.mayOnlyAccessLayers("Store SPI")
			.whereLayer("Transaction")
			.mayOnlyAccessLayers("Store SPI")
			.whereLayer("Web")
			.mayOnlyAccessLayers("API", "Core", "Store SPI", "Transaction")
			.whereLayer("Method")
			.mayOnlyAccessLayers("API", "Core", "Store SPI", "Transaction")
			.whereLayer("API")
			.mayOnlyAccessLayers("Core", "Method")
			.whereLayer("Client")
			.mayOnlyAccessLayers("Core")
			.whereLayer("Actuate")
			.mayOnlyAccessLayers("Core", "Store SPI")
			.whereLayer("OpenAPI")
			.mayOnlyAccessLayers("Core", "Web")
			.whereLayer("Autoconfigure")
			.mayNotBeAccessedByAnyLayer();
	}

	@Test
	void packagesKeepTheirLayers() {
		layers().check(MAIN);
	}

	@Test
	void packagesHaveNoCycles() {
		// a store and its SPI are one slice: a store depends on the SPI by definition
		slices().matching("dev.idempo.(*)..").should().beFreeOfCycles().check(MAIN);
	}

	@Test
	void storesHaveNoCyclesBetweenThem() {
		slices().matching("dev.idempo.store.(*)..").should().beFreeOfCycles().check(MAIN);
	}

	@Test
	void theRuleFailsWhenTheWebLayerNamesAStore() {
		JavaClasses violating = new ClassFileImporter().importClasses(WebImportingTheJdbcStore.class,
				JdbcLockingStore.class);
		EvaluationResult result = layers().evaluate(violating);
		assertThat(result.hasViolation()).isTrue();
		assertThat(result.getFailureReport().getDetails())
			.anySatisfy((detail) -> assertThat(detail).contains(WebImportingTheJdbcStore.class.getName())
				.contains(JdbcLockingStore.class.getName()));
	}

}
