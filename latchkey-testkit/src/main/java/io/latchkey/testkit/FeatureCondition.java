package io.latchkey.testkit;

import io.latchkey.Feature;
import java.lang.reflect.AnnotatedElement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/** Runs or skips tests by the features the test instance's fixture declares. */
final class FeatureCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Optional<Object> instance = context.getTestInstance();
    if (instance.isEmpty() || !(instance.get() instanceof ContractSupport support)) {
      return ConditionEvaluationResult.enabled("decided per test");
    }
    BackendFixture fixture = support.fixture();
    List<AnnotatedElement> elements = new ArrayList<>();
    context.getTestMethod().ifPresent(elements::add);
    elements.add(instance.get().getClass());
    for (AnnotatedElement element : elements) {
      Optional<RequiresFeature> needed =
          AnnotationSupport.findAnnotation(element, RequiresFeature.class);
      if (needed.isPresent()) {
        for (Feature feature : needed.get().value()) {
          if (!fixture.features().contains(feature)) {
            return ConditionEvaluationResult.disabled(
                fixture.name() + " does not declare " + feature);
          }
        }
      }
      Optional<RequiresMissingFeature> absent =
          AnnotationSupport.findAnnotation(element, RequiresMissingFeature.class);
      if (absent.isPresent() && fixture.features().contains(absent.get().value())) {
        return ConditionEvaluationResult.disabled(
            fixture.name() + " declares " + absent.get().value() + "; its refusal is not tested");
      }
      if (AnnotationSupport.isAnnotated(element, RequiresOtherProcesses.class)
          && fixture.uri().isEmpty()) {
        return ConditionEvaluationResult.disabled(
            fixture.name() + " cannot be reached from other processes");
      }
    }
    return ConditionEvaluationResult.enabled("features present");
  }
}
