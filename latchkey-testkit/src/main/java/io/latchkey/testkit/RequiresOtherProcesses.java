package io.latchkey.testkit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The test starts worker JVMs, so it runs only against fixtures whose lock service other processes
 * can reach ({@link BackendFixture#uri()} present).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@Inherited
@ExtendWith(FeatureCondition.class)
public @interface RequiresOtherProcesses {}
