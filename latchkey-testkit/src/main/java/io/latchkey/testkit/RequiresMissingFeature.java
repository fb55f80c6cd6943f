package io.latchkey.testkit;

import io.latchkey.Feature;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The test runs only against backends that lack this feature: it checks that they refuse it
 * cleanly.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@ExtendWith(FeatureCondition.class)
public @interface RequiresMissingFeature {
  /**
   * @return the feature that must be absent
   */
  Feature value();
}
