package dev.idempo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.PackageMatcher;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.Test;

import dev.idempo.store.ClaimResult;
import dev.idempo.store.LockingStore;
import dev.idempo.store.ReactiveLockingStore;
import dev.idempo.store.jdbc.JdbcLockingStore;
import dev.idempo.web.WebImportingTheJdbcStore;
import dev.idempo.web.WebMatchingAClaimResult;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
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
 * listeners); depends on the SPI.</li>
 * <li>{@code flow}: the one request flow (what a key and a claim decide, the claim modes,
 * the wait, the lease renewal); depends on {@code core} and the SPI. Outside the stores,
 * only it matches on {@code ClaimResult}'s variants.</li>
 * <li>{@code transaction}: transactional mode, shared by handlers and methods; reaches
 * SQL only through {@code TransactionalStore}; depends on the SPI and on {@code core},
 * whose {@code ClaimMode} (in {@code flow}) it implements.</li>
 * <li>{@code web}, {@code webflux}, {@code method}: the entry points, adapters over
 * {@code flow}; depend on {@code core}, {@code flow}, {@code store} and
 * {@code transaction} (and the annotations and exceptions of the root package), never on
 * a store implementation nor on each other.</li>
 * <li>{@code client}, {@code actuate}, {@code openapi}: leaves that use {@code core} (and
 * the SPI, or the web layer's declarations); {@code actuate} uses no web layer, so that
 * the endpoint and the health indicator serve every stack.</li>
 * <li>{@code autoconfigure}: wires everything; nothing depends on it.</li>
 * </ul>
 * The root package ({@code dev.idempo}: {@code @Idempotent}, its exceptions and
 * {@code IdempotencyTemplate}) is the public API; the template is a facade over the
 * method layer, whose calls throw the root package's exceptions, so the two are allowed
 * to use each other; what keeps that pair free of a cycle between classes is that the
 * annotation and the exceptions use no other idempo package and only the template uses
 * the method layer.
 * <p>
 * The packages are cut into Maven modules (CONTRIBUTING.md, "Modules"):
 * {@code idempo-core} (the root package, {@code core}, {@code flow}, {@code store},
 * {@code store.memory}, {@code method}, {@code transaction}, {@code actuate}) at the
 * bottom; {@code idempo-webmvc} ({@code web}, {@code openapi}), {@code idempo-webflux}
 * ({@code webflux}), {@code idempo-store-redis}, {@code idempo-store-jdbc} and
 * {@code idempo-client} each on {@code idempo-core} alone; and
 * {@code idempo-spring-boot-autoconfigure} over them all, used by none.
 *
 * @author idempo
 */
class ArchitectureTests {

	// the library modules' test-jars (the contract suite, how tests find servers) are on
	// the class path too; their classes are no part of the architecture
	private static final ImportOption DO_NOT_INCLUDE_TEST_JARS = (location) -> !location.contains("-tests.jar");

	private static final JavaClasses MAIN = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.withImportOption(DO_NOT_INCLUDE_TEST_JARS)
		.importPackages("dev.idempo");

	/** Each module and the packages it holds. */
	private static final Map<String, List<String>> MODULES = modules();

	private static Map<String, List<String>> modules() {
		Map<String, List<String>> modules = new LinkedHashMap<>();
		modules.put("idempo-core",
				List.of("dev.idempo", "dev.idempo.core..", "dev.idempo.flow..", "dev.idempo.store",
						"dev.idempo.store.memory..", "dev.idempo.method..", "dev.idempo.transaction..",
						"dev.idempo.actuate.."));
		modules.put("idempo-webmvc", List.of("dev.idempo.web..", "dev.idempo.openapi.."));
		modules.put("idempo-webflux", List.of("dev.idempo.webflux.."));
		modules.put("idempo-store-redis", List.of("dev.idempo.store.redis.."));
		modules.put("idempo-store-jdbc", List.of("dev.idempo.store.jdbc.."));
		modules.put("idempo-client", List.of("dev.idempo.client.."));
		modules.put("idempo-spring-boot-autoconfigure", List.of("dev.idempo.autoconfigure.."));
		return modules;
	}

	static ArchRule modulesKeepTheirLayers() {
		return layeredArchitecture().consideringOnlyDependenciesInLayers()
			.ensureAllClassesAreContainedInArchitecture()
			.layer("idempo-core")
			.definedBy(packages("idempo-core"))
			.layer("idempo-webmvc")
			.definedBy(packages("idempo-webmvc"))
			.layer("idempo-webflux")
			.definedBy(packages("idempo-webflux"))
			.layer("idempo-store-redis")
			.definedBy(packages("idempo-store-redis"))
			.layer("idempo-store-jdbc")
			.definedBy(packages("idempo-store-jdbc"))
			.layer("idempo-client")
			.definedBy(packages("idempo-client"))
			.layer("idempo-spring-boot-autoconfigure")
			.definedBy(packages("idempo-spring-boot-autoconfigure"))
			.whereLayer("idempo-core")
			.mayNotAccessAnyLayer()
			.whereLayer("idempo-webmvc")
			.mayOnlyAccessLayers("idempo-core")
			.whereLayer("idempo-webflux")
			.mayOnlyAccessLayers("idempo-core")
			.whereLayer("idempo-store-redis")
			.mayOnlyAccessLayers("idempo-core")
			.whereLayer("idempo-store-jdbc")
			.mayOnlyAccessLayers("idempo-core")
			.whereLayer("idempo-client")
			.mayOnlyAccessLayers("idempo-core")
			.whereLayer("idempo-spring-boot-autoconfigure")
			.mayNotBeAccessedByAnyLayer();
	}

	private static String[] packages(String module) {
		return MODULES.get(module).toArray(String[]::new);
	}

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
			.layer("Flow")
			.definedBy("dev.idempo.flow..")
			.layer("Transaction")
			.definedBy("dev.idempo.transaction..")
			.layer("Web")
			.definedBy("dev.idempo.web..")
			.layer("WebFlux")
			.definedBy("dev.idempo.webflux..")
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
			.whereLayer("Flow")
			.mayOnlyAccessLayers("Core", "Store SPI")
			.whereLayer("Transaction")
			.mayOnlyAccessLayers("Core", "Flow", "Store SPI")
			.whereLayer("Web")
			.mayOnlyAccessLayers("API", "Core", "Flow", "Store SPI", "Transaction")
			.whereLayer("WebFlux")
			.mayOnlyAccessLayers("API", "Core", "Flow", "Store SPI")
			.whereLayer("Method")
			.mayOnlyAccessLayers("API", "Core", "Flow", "Store SPI", "Transaction")
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

	/**
	 * The decision tree of a request lives once: outside the stores (and their
	 * decorators, which implement the SPI), only the flow matches on what a claim found.
	 * Entry points take the flow's {@code Claim} instead, so that a new one (gRPC,
	 * GraphQL, messages) is an adapter rather than another copy of the decisions.
	 */
	@Test
	void onlyTheFlowAndTheStoresMatchOnClaimResults() {
		claimResultsOnlyInTheFlow().check(MAIN);
	}

	static ArchRule claimResultsOnlyInTheFlow() {
		return noClasses().that()
			.resideOutsideOfPackages("dev.idempo.flow..", "dev.idempo.store..")
			.and()
			.doNotImplement(LockingStore.class)
			.and()
			.doNotImplement(ReactiveLockingStore.class)
			.should()
			.dependOnClassesThat()
			.belongToAnyOf(ClaimResult.Completed.class, ClaimResult.Acquired.class, ClaimResult.InProgress.class)
			.because("the request's decisions live once, in dev.idempo.flow");
	}

	@Test
	void theClaimResultRuleFailsWhenAnEntryPointMatchesOnAClaimResult() {
		JavaClasses offender = new ClassFileImporter().importClasses(WebMatchingAClaimResult.class);
		EvaluationResult result = claimResultsOnlyInTheFlow().evaluate(offender);
		assertThat(result.hasViolation()).isTrue();
	}

	@Test
	void packagesKeepTheirLayers() {
		layers().check(MAIN);
	}

	@Test
	void theAnnotationAndTheExceptionsOfTheRootPackageUseNoOtherPackage() {
		noClasses().that()
			.resideInAPackage("dev.idempo")
			.and()
			.doNotBelongToAnyOf(IdempotencyTemplate.class)
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.idempo.*..")
			.check(MAIN);
	}

	@Test
	void onlyTheAutoConfigurationUsesTheTemplate() {
		// the template is a facade over the method layer: a use of it below would close
		// a cycle between the root package and the method layer
		noClasses().that()
			.resideOutsideOfPackages("dev.idempo", "dev.idempo.autoconfigure..")
			.should()
			.dependOnClassesThat()
			.belongToAnyOf(IdempotencyTemplate.class)
			.check(MAIN);
	}

	@Test
	void modulesDependOnlyOnTheModulesBelow() {
		modulesKeepTheirLayers().check(MAIN);
	}

	@Test
	void everyPackageLivesInItsModule() {
		List<String> misplaced = new ArrayList<>();
		for (JavaClass javaClass : MAIN) {
			String module = moduleOf(javaClass.getPackageName());
			String location = javaClass.getSource().map((source) -> source.getUri().toString()).orElse("");
			if (!location.contains("/" + module + "/")) {
				misplaced.add(javaClass.getName() + " (" + module + ") in " + location);
			}
		}
		assertThat(misplaced).isEmpty();
	}

	private static String moduleOf(String packageName) {
		for (Map.Entry<String, List<String>> module : MODULES.entrySet()) {
			for (String identifier : module.getValue()) {
				if (PackageMatcher.of(identifier).matches(packageName)) {
					return module.getKey();
				}
			}
		}
		return "none";
	}

	@Test
	void packagesHaveNoCycles() {
		// a store and its SPI are one slice: a store depends on the SPI by definition
		slices().matching("dev.idempo.(*)..").should().beFreeOfCycles().check(MAIN);
	}

	@Test
	void autoConfigurationTechnologiesHaveNoCyclesBetweenThem() {
		// each technology's package (store.redis, web.servlet, listener, ...) uses the
		// shared one (dev.idempo.autoconfigure), which imports their configurations; one
		// technology may name another's (the servlet flow and idempotent methods look up
		// the JDBC store's transactional mode), but never in a cycle
		slices().matching("dev.idempo.autoconfigure.(**)").should().beFreeOfCycles().check(MAIN);
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

	@Test
	void theModuleRuleFailsWhenTheWebModuleNamesAStore() {
		JavaClasses violating = new ClassFileImporter().importClasses(WebImportingTheJdbcStore.class,
				JdbcLockingStore.class);
		EvaluationResult result = modulesKeepTheirLayers().evaluate(violating);
		assertThat(result.hasViolation()).isTrue();
		assertThat(result.getFailureReport().getDetails())
			.anySatisfy((detail) -> assertThat(detail).contains(WebImportingTheJdbcStore.class.getName())
				.contains(JdbcLockingStore.class.getName()));
	}

}
