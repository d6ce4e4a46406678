package dev.idempo.method;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Parses the key expression of an {@code @Idempotent(key = ...)} method at start-up and
 * checks every variable it names against what its evaluation context will provide (a
 * {@code MethodBasedEvaluationContext}, see {@link IdempotentMethodRunner}): the method's
 * parameters by name, {@code #p<i>} and {@code #a<i>} by index, {@code #root} and
 * {@code #this}, and variables the expression assigns itself. SpEL evaluates an unknown
 * variable to {@code null}, and a {@code null} key runs the call unprotected, so a typo
 * ({@code #ordr} for {@code order}) would turn protection off silently: it fails the
 * start-up instead, as does a call of a function (idempo registers none; a parameter
 * holding a {@link Method} or {@link MethodHandle} is one).
 *
 * @author idempo
 */
final class KeyExpressions {

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private final ParameterNameDiscoverer parameterNames;

	/**
	 * Creates a parser.
	 * @param parameterNames discovers parameter names as the evaluation context does
	 */
	KeyExpressions(ParameterNameDiscoverer parameterNames) {
		this.parameterNames = parameterNames;
	}

	/**
	 * Parses and checks the key expression of a method.
	 * @param method the method, as the bean's class declares it
	 * @param expression the key expression
	 * @param description the method, as it is named to the user
	 * @return the parsed expression
	 * @throws IdempotentMethodException if it does not parse, names a variable the method
	 * has no parameter of, or calls a function
	 */
	SpelExpression parse(Method method, String expression, String description) {
		SpelExpression parsed;
		try {
			parsed = PARSER.parseRaw(expression);
		}
		catch (ParseException ex) {
			throw new IdempotentMethodException(description, "The key expression \"" + expression + "\" of "
					+ description + " does not parse: " + ex.getMessage(),
					"Correct the SpEL expression in @Idempotent(key = ...).");
		}
		List<SpelNode> references = new ArrayList<>();
		Set<String> assigned = new HashSet<>();
		collect(parsed.getAST(), references, assigned);
		Parameters parameters = new Parameters(method, this.parameterNames.getParameterNames(method));
		for (SpelNode reference : references) {
			check(reference, parameters, assigned, expression, description);
		}
		return parsed;
	}

	private static void collect(SpelNode node, List<SpelNode> references, Set<String> assigned) {
		if (node instanceof VariableReference || node instanceof FunctionReference) {
			references.add(node);
		}
		if (node instanceof Assign && node.getChild(0) instanceof VariableReference target) {
			assigned.add(nameOf(target));
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			collect(node.getChild(i), references, assigned);
		}
	}

	private static void check(SpelNode reference, Parameters parameters, Set<String> assigned, String expression,
			String description) {
		String name = nameOf(reference);
		String problem = "The key expression \"" + expression + "\" of " + description;
		if (reference instanceof FunctionReference) {
			if (!assigned.contains(name) && !parameters.isFunction(name)) {
				throw new IdempotentMethodException(description,
						problem + " calls the function #" + name
								+ "(...), which is not registered: idempo registers no SpEL functions",
						"Call a method of an argument (#order.id()) or of a bean (@ids.of(#order)) instead.");
			}
			return;
		}
		if (name.equals("root") || name.equals("this") || assigned.contains(name) || parameters.indexOf(name) >= 0) {
			return;
		}
		if (parameters.names() == null) {
			throw new IdempotentMethodException(description,
					problem + " names #" + name
							+ ", but the method's parameter names are not known at run time (it was compiled without "
							+ "-parameters): #" + name + " would be null and every call would run unprotected",
					"Compile with -parameters (<parameters>true</parameters> of the maven-compiler-plugin; Spring "
							+ "Boot's parent and Gradle plugin set it), or name the argument by index: #p0 or #a0.");
		}
		throw new IdempotentMethodException(description,
				problem + " names #" + name + ", which is not a parameter of the method (" + parameters.describe()
						+ "): it would be null and every call would run unprotected",
				"Correct the variable in @Idempotent(key = ...): name a parameter of the method, or an argument "
						+ "by index (#p0, #a0).");
	}

	/** The name of a {@code #name} or {@code #name(...)} node. */
	private static String nameOf(SpelNode reference) {
		String text = reference.toStringAST();
		int arguments = text.indexOf('(');
		return text.substring(1, (arguments >= 0) ? arguments : text.length());
	}

	/**
	 * The parameters of a method as its evaluation context names them.
	 *
	 * @param method the method
	 * @param names their names, {@code null} if they cannot be discovered
	 */
	private record Parameters(Method method, String @Nullable [] names) {

		int indexOf(String variable) {
			int count = this.method.getParameterCount();
			if (this.names != null) {
				int index = Arrays.asList(this.names).indexOf(variable);
				if (index >= 0 && index < count) {
					return index;
				}
			}
			return IntStream.range(0, count)
				.filter((i) -> variable.equals("p" + i) || variable.equals("a" + i))
				.findFirst()
				.orElse(-1);
		}

		boolean isFunction(String variable) {
			int index = indexOf(variable);
			if (index < 0) {
				return false;
			}
			Class<?> type = this.method.getParameterTypes()[index];
			return Method.class.isAssignableFrom(type) || MethodHandle.class.isAssignableFrom(type);
		}

		String describe() {
			int count = this.method.getParameterCount();
			if (count == 0) {
				return "it has no parameters";
			}
			String byName = (this.names != null)
					? Arrays.stream(this.names).map((name) -> "#" + name).collect(Collectors.joining(", ")) + ", " : "";
			String last = Integer.toString(count - 1);
			return "its arguments: " + byName + ((count == 1) ? "#p0, #a0" : "#p0 to #p" + last + ", #a0 to #a" + last);
		}

	}

}
