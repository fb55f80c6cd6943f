package io.latchkey.spring;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcutAdvisor;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * An advisor of the methods that carry one annotation: each is read and checked once, when its bean
 * is proxied (a mistake fails the bean's creation, so the application's start), and a call finds
 * what was checked by the method it runs.
 *
 * @param <A> the annotation
 * @param <C> what a checked method yields
 */
abstract class AnnotatedMethodAdvisor<A extends Annotation, C>
    extends StaticMethodMatcherPointcutAdvisor implements MethodInterceptor {
  private static final long serialVersionUID = 1L;

  private final Class<A> annotation;
  private final transient Map<Method, C> checked = new ConcurrentHashMap<>();

  AnnotatedMethodAdvisor(Class<A> annotation) {
    this.annotation = annotation;
    setAdvice(this);
  }

  /**
   * Reads one annotated method.
   *
   * @throws IllegalArgumentException saying what is wrong, naming the method
   */
  abstract C check(Method method, A found);

  @Override
  public final boolean matches(Method method, Class<?> targetClass) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    A found = AnnotatedElementUtils.findMergedAnnotation(specific, annotation);
    if (found == null) {
      return false;
    }
    checked.computeIfAbsent(
        specific,
        m -> {
          try {
            return check(m, found);
          } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
          }
        });
    return true;
  }

  /**
   * @return what was checked of the method this call runs, or null if it is not annotated
   */
  final @Nullable C checkedFor(MethodInvocation invocation) {
    Object target = invocation.getThis();
    Class<?> targetClass =
        target != null
            ? AopUtils.getTargetClass(target)
            : invocation.getMethod().getDeclaringClass();
    return checked.get(AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass));
  }
}
