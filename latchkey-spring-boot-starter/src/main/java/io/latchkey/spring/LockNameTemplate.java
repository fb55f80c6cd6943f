package io.latchkey.spring;

import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * A {@link Locked @Locked} name: literal text with SpEL in {@code #{...}}, parsed once when the
 * bean is proxied, with every {@code #variable} checked against the method's parameters then, so
 * that a typo fails the start of the application instead of the first call.
 */
final class LockNameTemplate {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final TemplateParserContext TEMPLATE = new TemplateParserContext();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  private final String source;
  private final Expression expression;
  private final Method method;

  private LockNameTemplate(String source, Expression expression, Method method) {
    this.source = source;
    this.expression = expression;
    this.method = method;
  }

  /**
   * @param source the template
   * @param method the annotated method
   * @param where the method, for messages
   * @return the parsed template
   * @throws IllegalArgumentException if it does not parse or names an unknown variable
   */
  static LockNameTemplate parse(String source, Method method, String where) {
    if (source.isBlank()) {
      throw new IllegalArgumentException(where + ": the lock name is empty");
    }
    Expression expression;
    try {
      expression = PARSER.parseExpression(source, TEMPLATE);
    } catch (ParseException e) {
      throw new IllegalArgumentException(
          where + ": the lock name \"" + source + "\" is not a valid template: " + e.getMessage(),
          e);
    }
    Set<String> known = knownVariables(method);
    for (String variable : variables(expression)) {
      if (!known.contains(variable)) {
        throw new IllegalArgumentException(
            where
                + ": the lock name \""
                + source
                + "\" refers to #"
                + variable
                + ", which is not a parameter of the method (it has "
                + String.join(", ", parameterNames(method))
                + "; compile with -parameters to use names, or write #p0, #p1...)");
      }
    }
    return new LockNameTemplate(source, expression, method);
  }

  private static Set<String> knownVariables(Method method) {
    Set<String> known = new HashSet<>(parameterNames(method));
    for (int i = 0; i < method.getParameterCount(); i++) {
      known.add("p" + i);
      known.add("a" + i);
    }
    known.add("root");
    known.add("this");
    return known;
  }

  private static java.util.List<String> parameterNames(Method method) {
    String[] names = NAMES.getParameterNames(method);
    if (names == null) {
      return java.util.List.of();
    }
    return java.util.List.of(names);
  }

  private static Set<String> variables(Expression expression) {
    Set<String> found = new HashSet<>();
    if (expression instanceof SpelExpression spel) {
      collect(spel.getAST(), found);
    } else if (expression
        instanceof org.springframework.expression.common.CompositeStringExpression composite) {
      for (Expression part : composite.getExpressions()) {
        found.addAll(variables(part));
      }
    }
    return found;
  }

  private static void collect(SpelNode node, Set<String> found) {
    if (node instanceof VariableReference) {
      found.add(node.toStringAST().substring(1));
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      collect(node.getChild(i), found);
    }
  }

  /**
   * @param target the bean
   * @param args the call's arguments
   * @param beans for {@code @bean} references, or null
   * @return the lock name of this call
   * @throws IllegalArgumentException if the name evaluates to nothing
   */
  String evaluate(Object target, @Nullable Object[] args, @Nullable BeanFactory beans) {
    StandardEvaluationContext context =
        new MethodBasedEvaluationContext(target, method, args, NAMES);
    if (beans != null) {
      context.setBeanResolver(new BeanFactoryResolver(beans));
    }
    String name = expression.getValue(context, String.class);
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException(
          "the lock name \"" + source + "\" of " + method + " evaluated to an empty name");
    }
    return name;
  }
}
