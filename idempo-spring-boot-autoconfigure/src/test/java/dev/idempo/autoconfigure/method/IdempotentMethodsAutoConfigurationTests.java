package dev.idempo.autoconfigure.method;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.idempo.IdempotencyTemplate;
import dev.idempo.Idempotent;
import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.core.IdempotencyListener;
import dev.idempo.method.IdempotentMethodAdvisor;
import dev.idempo.method.IdempotentMethodException;
import dev.idempo.store.LockingStore;
import dev.idempo.web.IdempotencyInterceptor;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Auto-configuration of idempotent methods and the template: without a web server, and
 * the start-up failures of annotations idempo cannot honour.
 *
 * @author idempo
 */
class IdempotentMethodsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	@Test
	void worksWithoutTheServletApiOrSpringMvc() {
		this.contextRunner
			.withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web.servlet"))
			.withUserConfiguration(ServiceConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(LockingStore.class);
				assertThat(context).hasSingleBean(IdempotencyTemplate.class);
				assertThat(context).hasSingleBean(IdempotentMethodAdvisor.class);
				assertThat(context).doesNotHaveBean(IdempotencyInterceptor.class);
				Service service = context.getBean(Service.class);
				assertThat(AopUtils.isAopProxy(service)).isTrue();
				assertThat(service.settle("2026-11-24")).isOne();
				assertThat(service.settle("2026-11-24")).isOne();
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				AtomicInteger runs = new AtomicInteger();
				template.execute("job", "k", runs::incrementAndGet);
				template.execute("job", "k", runs::incrementAndGet);
				assertThat(runs).hasValue(1);
			});
	}

	@Test
	void usesADefaultMapperWhenTheApplicationHasNone() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withUserConfiguration(ServiceConfiguration.class)
			.run((context) -> {
				Service service = context.getBean(Service.class);
				assertThat(service.settle("a")).isOne();
				assertThat(service.settle("a")).isOne();
			});
	}

	@Test
	void canBeDisabled() {
		this.contextRunner.withPropertyValues("idempo.enabled=false")
			.withUserConfiguration(ServiceConfiguration.class)
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotencyTemplate.class);
				assertThat(AopUtils.isAopProxy(context.getBean(Service.class))).isFalse();
			});
	}

	@Test
	void aMethodWithoutKeyOutsideTheWebLayerFailsStartUpNamingIt() {
		assertFailure(NoKeyConfiguration.class, NoKeyService.class.getName() + ".run(String)", "has no key");
	}

	@Test
	void aKeyOnAWebHandlerFailsStartUpNamingIt() {
		assertFailure(KeyOnHandlerConfiguration.class, KeyOnHandler.class.getName() + ".create(String)",
				"Idempotency-Key header");
	}

	@Test
	void aKeyThatDoesNotParseFailsStartUpNamingIt() {
		assertFailure(BadExpressionConfiguration.class, BadExpressionService.class.getName() + ".run(String)",
				"does not parse");
	}

	@Test
	void aKeyNamingAVariableTheMethodHasNoParameterOfFailsStartUpNamingMethodAndVariable() {
		assertFailure(TypoConfiguration.class, TypoService.class.getName() + ".run(String)",
				"names #ordr, which is not a parameter of the method");
	}

	@Test
	void aTransactionalMethodOnTheMemoryStoreFailsStartUpNamingIt() {
		assertFailure(TransactionalConfiguration.class, TransactionalService.class.getName() + ".run(String)",
				"needs the postgres or mysql store");
	}

	@Test
	void anInvalidTtlFailsStartUpNamingTheMethod() {
		assertFailure(BadTtlConfiguration.class, BadTtlService.class.getName() + ".run(String)",
				"not a valid duration");
	}

	@Test
	void aTtlBeyondHundredYearsFailsStartUpNamingTheMethod() {
		assertFailure(LongTtlConfiguration.class, LongTtlService.class.getName() + ".run(String)", "at most 36500d");
	}

	@Test
	void aClassLevelAnnotationOnANonControllerFailsStartUp() {
		assertFailure(ClassLevelServiceConfiguration.class, ClassLevelService.class.getName(), "not a controller");
	}

	@Test
	void aControllerAnnotatedAtTypeLevelKeepsItsOtherMethodsUnprotected() {
		this.contextRunner.withUserConfiguration(ClassLevelControllerConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			ClassLevelController controller = context.getBean(ClassLevelController.class);
			assertThat(controller.helper()).isOne();
			assertThat(controller.helper()).isEqualTo(2);
		});
	}

	@Test
	void frameworkRetryableRunsOutsideTheClaimSoEachAttemptClaimsAfresh() {
		this.contextRunner.withUserConfiguration(RetryConfiguration.class).run((context) -> {
			RetriedService service = context.getBean(RetriedService.class);
			ExecutedCalls executed = context.getBean(ExecutedCalls.class);
			assertThat(service.flaky("k")).isEqualTo(2);
			assertThat(service.flaky("k")).isEqualTo(2);
			// two attempts, each its own claim; the later call replays
			assertThat(service.attempts()).isEqualTo(2);
			assertThat(executed.count).hasValue(2);
		});
	}

	private void assertFailure(Class<?> configuration, String method, String problem) {
		this.contextRunner.withUserConfiguration(configuration).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			IdempotentMethodException cause = findCause(failure);
			assertThat(cause.getMethod()).isEqualTo(method);
			assertThat(cause.getMessage()).contains(problem);
			FailureAnalysis analysis = new IdempotentMethodFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains(method).contains(problem);
			assertThat(analysis.getAction()).isNotBlank();
		});
	}

	private static IdempotentMethodException findCause(Throwable failure) {
		Throwable current = failure;
		while (current != null) {
			if (current instanceof IdempotentMethodException exception) {
				return exception;
			}
			current = current.getCause();
		}
		throw new AssertionError("No IdempotentMethodException in " + failure, failure);
	}

	public static class Service {

		private final AtomicInteger runs = new AtomicInteger();

		@Idempotent(key = "#date")
		public int settle(String date) {
			return this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ServiceConfiguration {

		@Bean
		Service service() {
			return new Service();
		}

	}

	public static class RetriedService {

		final AtomicInteger attempts = new AtomicInteger();

		@Retryable(maxRetries = 2, delay = 0)
		@Idempotent(key = "#id")
		public int flaky(String id) {
			int attempt = this.attempts.incrementAndGet();
			if (attempt == 1) {
				throw new IllegalStateException("first attempt fails");
			}
			return attempt;
		}

		// not a field read: the bean is a proxy
		public int attempts() {
			return this.attempts.get();
		}

	}

	static class ExecutedCalls implements IdempotencyListener {

		final AtomicInteger count = new AtomicInteger();

		@Override
		public void onRequest(Source source, RequestOutcome outcome) {
			if (source == Source.METHOD && outcome == RequestOutcome.EXECUTED) {
				this.count.incrementAndGet();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableResilientMethods
	static class RetryConfiguration {

		@Bean
		RetriedService service() {
			return new RetriedService();
		}

		@Bean
		ExecutedCalls executedCalls() {
			return new ExecutedCalls();
		}

	}

	public static class NoKeyService {

		@Idempotent
		public void run(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoKeyConfiguration {

		@Bean
		NoKeyService service() {
			return new NoKeyService();
		}

	}

	@RestController
	public static class KeyOnHandler {

		@PostMapping("/things")
		@Idempotent(key = "#body")
		public String create(String body) {
			return body;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class KeyOnHandlerConfiguration {

		@Bean
		KeyOnHandler handler() {
			return new KeyOnHandler();
		}

	}

	public static class BadExpressionService {

		@Idempotent(key = "#id +")
		public void run(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadExpressionConfiguration {

		@Bean
		BadExpressionService service() {
			return new BadExpressionService();
		}

	}

	public static class TypoService {

		@Idempotent(key = "#ordr")
		public void run(String order) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TypoConfiguration {

		@Bean
		TypoService service() {
			return new TypoService();
		}

	}

	public static class TransactionalService {

		@Idempotent(key = "#id", transactional = true)
		public void run(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TransactionalConfiguration {

		@Bean
		TransactionalService service() {
			return new TransactionalService();
		}

	}

	public static class BadTtlService {

		@Idempotent(key = "#id", ttl = "soon")
		public void run(String id) {
		}

	}

	public static class LongTtlService {

		@Idempotent(key = "#id", ttl = "36501d")
		public void run(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LongTtlConfiguration {

		@Bean
		LongTtlService service() {
			return new LongTtlService();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadTtlConfiguration {

		@Bean
		BadTtlService service() {
			return new BadTtlService();
		}

	}

	@Idempotent
	public static class ClassLevelService {

		public void run(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ClassLevelServiceConfiguration {

		@Bean
		ClassLevelService service() {
			return new ClassLevelService();
		}

	}

	@Controller
	@Idempotent
	public static class ClassLevelController {

		private final AtomicInteger runs = new AtomicInteger();

		@PostMapping("/class-level")
		public String create() {
			return "created";
		}

		public int helper() {
			return this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ClassLevelControllerConfiguration {

		@Bean
		ClassLevelController controller() {
			return new ClassLevelController();
		}

	}

}
