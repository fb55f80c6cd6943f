/**
 * Spring Boot integration of latchkey: a {@link io.latchkey.Latchkey} bean configured from {@code
 * latchkey.*} properties ({@link io.latchkey.spring.LatchkeyProperties}), {@link
 * io.latchkey.spring.Locked @Locked} methods, {@link
 * io.latchkey.spring.ScheduledLock @ScheduledLock} jobs, Micrometer metrics, a Spring Integration
 * lock registry, and an actuator endpoint and health indicator.
 */
@NullMarked
package io.latchkey.spring;

import org.jspecify.annotations.NullMarked;
