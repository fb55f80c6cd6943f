package io.latchkey.testkit;

import io.latchkey.Feature;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The test (or every test of the class) runs only against backends that declare all these features;
 * against others it is reported as skipped with the reason.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@Inherited
@ExtendWith(FeatureCondition.class)
public @interface RequiresFeature {
  /**
   * @return the features needed
   */
  Feature[] value();
}
