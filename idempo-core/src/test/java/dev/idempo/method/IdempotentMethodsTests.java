package dev.idempo.method;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import dev.idempo.Idempotent;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link IdempotentMethods}: the variables a key expression may name are the
 * ones its evaluation context provides, and anything else fails when the method is found
 * (at start-up), naming the method and the variable.
 *
 * @author idempo
 */
class IdempotentMethodsTests {

	private final IdempotentMethods methods = new IdempotentMethods();

	@Test
	void acceptsWhatTheEvaluationContextProvides() {
		for (String name : List.of("byName", "byIndex", "byArgument", "byRoot", "byThis", "byBean", "byAssignment",
				"byFunctionParameter", "byLiteral")) {
			assertThat(this.methods.find(method(name), Orders.class)).as(name).isNotNull();
		}
	}

	@Test
	void theAcceptedVariablesAreTheOnesTheEvaluationContextProvides() throws Exception {
		Order order = new Order("o-1", "t-1");
		MethodHandle id = MethodHandles.lookup().findVirtual(Order.class, "id", MethodType.methodType(String.class));
		assertThat(evaluate("byName", order)).isEqualTo("o-1");
		assertThat(evaluate("byIndex", order, "t-1")).isEqualTo("o-1:t-1");
		assertThat(evaluate("byArgument", order)).isEqualTo("o-1");
		assertThat(evaluate("byRoot", order)).isEqualTo("byRoot" + order);
		assertThat(evaluate("byThis", List.of("", "t-2"))).isEqualTo("t-2");
		assertThat(evaluate("byAssignment", order)).isEqualTo("o-1o-1");
		assertThat(evaluate("byFunctionParameter", id, order)).isEqualTo("o-1");
	}

	@Test
	void aVariableTheMethodHasNoParameterOfIsRejectedNamingMethodAndVariable() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("typo"), Orders.class))
			.satisfies((ex) -> assertThat(ex.getMethod()).isEqualTo(Orders.class.getName() + ".typo(Order)"))
			.withMessageContaining("#ordr")
			.withMessageContaining("not a parameter of the method")
			.withMessageContaining("#order");
	}

	@Test
	void monoAndFutureResultsAreAcceptedWithTheirInnerTypeAsResultType() {
		IdempotentMethod mono = this.methods.find(method("mono"), Orders.class);
		IdempotentMethod future = this.methods.find(method("future"), Orders.class);
		assertThat(mono).isNotNull();
		assertThat(mono.resultKind()).isEqualTo(IdempotentMethod.ResultKind.MONO);
		assertThat(mono.resultType().toClass()).isEqualTo(Order.class);
		assertThat(future).isNotNull();
		assertThat(future.resultKind()).isEqualTo(IdempotentMethod.ResultKind.FUTURE);
		assertThat(future.resultType().toClass()).isEqualTo(String.class);
	}

	@Test
	void aFluxResultIsRejectedSayingWhatToReturnInstead() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("flux"), Orders.class))
			.withMessageContaining("returns Flux")
			.satisfies((ex) -> assertThat(ex.getAction()).contains("Mono<List<T>>"));
	}

	@Test
	void aTransactionalMonoIsRejected() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("transactionalMono"), Orders.class))
			.withMessageContaining("transactional = true")
			.withMessageContaining("returns Mono");
	}

	@Test
	void anIndexBeyondTheParametersIsRejected() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("indexTooFar"), Orders.class))
			.withMessageContaining("#p1");
	}

	@Test
	void aVariableInsideANestedExpressionIsRejected() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("nestedTypo"), Orders.class))
			.withMessageContaining("#tenat");
	}

	@Test
	void aFunctionThatIsNotRegisteredIsRejected() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("unknownFunction"), Orders.class))
			.withMessageContaining("#digest(...)")
			.withMessageContaining("not registered");
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("parameterCalledAsFunction"), Orders.class))
			.withMessageContaining("#order(...)");
	}

	@Test
	void anExpressionThatDoesNotParseIsRejected() {
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> this.methods.find(method("unparsable"), Orders.class))
			.withMessageContaining("does not parse");
	}

	@Test
	void withoutParameterNamesANameFailsSayingToCompileWithParametersButIndexesWork() {
		IdempotentMethods withoutNames = new IdempotentMethods(new NoParameterNames());
		assertThatExceptionOfType(IdempotentMethodException.class)
			.isThrownBy(() -> withoutNames.find(method("byName"), Orders.class))
			.withMessageContaining("#order")
			.withMessageContaining("-parameters")
			.satisfies((ex) -> assertThat(ex.getAction()).contains("-parameters").contains("#p0"));
		assertThat(withoutNames.find(method("byIndex"), Orders.class)).isNotNull();
		assertThat(withoutNames.find(method("byArgument"), Orders.class)).isNotNull();
		assertThat(withoutNames.find(method("byRoot"), Orders.class)).isNotNull();
	}

	private @Nullable Object evaluate(String name, Object... arguments) {
		IdempotentMethod found = this.methods.find(method(name), Orders.class);
		assertThat(found).isNotNull();
		Method method = found.method();
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
				new IdempotentMethodRunner.Root(method, arguments, new Orders(), Orders.class), method, arguments,
				new DefaultParameterNameDiscoverer());
		return found.key().getValue(context);
	}

	private static Method method(String name) {
		for (Method method : ReflectionUtils.getDeclaredMethods(Orders.class)) {
			if (method.getName().equals(name)) {
				return method;
			}
		}
		throw new IllegalArgumentException(name);
	}

	record Order(String id, String tenant) {
	}

	public static class Orders {

		@Idempotent(key = "#order.id()")
		public reactor.core.publisher.Mono<Order> mono(Order order) {
			return reactor.core.publisher.Mono.just(order);
		}

		@Idempotent(key = "#order.id()")
		public java.util.concurrent.CompletableFuture<String> future(Order order) {
			return java.util.concurrent.CompletableFuture.completedFuture(order.id());
		}

		@Idempotent(key = "#order.id()")
		public reactor.core.publisher.Flux<Order> flux(Order order) {
			return reactor.core.publisher.Flux.just(order);
		}

		@Idempotent(key = "#order.id()", transactional = true)
		public reactor.core.publisher.Mono<Order> transactionalMono(Order order) {
			return reactor.core.publisher.Mono.just(order);
		}

		@Idempotent(key = "#order.id()")
		public void byName(Order order) {
		}

		@Idempotent(key = "#p0.id() + ':' + #a1")
		public void byIndex(Order order, String tenant) {
		}

		@Idempotent(key = "#a0.id()")
		public void byArgument(Order order) {
		}

		@Idempotent(key = "#root.method.name + #root.args[0]")
		public void byRoot(Order order) {
		}

		@Idempotent(key = "#tenants.?[#this.length() > 0][0]")
		public void byThis(List<String> tenants) {
		}

		@Idempotent(key = "@keys.of(#order)")
		public void byBean(Order order) {
		}

		@Idempotent(key = "(#id = #order.id()) + #id")
		public void byAssignment(Order order) {
		}

		@Idempotent(key = "#digest(#order)")
		public void byFunctionParameter(MethodHandle digest, Order order) {
		}

		@Idempotent(key = "'nightly'")
		public void byLiteral() {
		}

		@Idempotent(key = "#ordr.id()")
		public void typo(Order order) {
		}

		@Idempotent(key = "#p1")
		public void indexTooFar(Order order) {
		}

		@Idempotent(key = "#order.id() + (#order.tenant() == null ? '' : #tenat)")
		public void nestedTypo(Order order) {
		}

		@Idempotent(key = "#digest(#order)")
		public void unknownFunction(Order order) {
		}

		@Idempotent(key = "#order(1)")
		public void parameterCalledAsFunction(Order order) {
		}

		@Idempotent(key = "#order +")
		public void unparsable(Order order) {
		}

	}

	/** As a class compiled without {@code -parameters} looks to Spring. */
	static class NoParameterNames implements ParameterNameDiscoverer {

		@Override
		public String @Nullable [] getParameterNames(Method method) {
			return null;
		}

		@Override
		public String @Nullable [] getParameterNames(Constructor<?> ctor) {
			return null;
		}

	}

}
