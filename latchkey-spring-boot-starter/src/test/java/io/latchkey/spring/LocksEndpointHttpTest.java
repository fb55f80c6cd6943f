package io.latchkey.spring;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.web.servlet.MockMvc;

/**
 * The {@code locks} endpoint over HTTP behind Spring Security: operators read, only admins
 * force-release, strangers get nothing.
 */
@SpringBootTest(
    classes = LocksEndpointHttpTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.MOCK,
    properties = {
      "latchkey.url=memory:http",
      "latchkey.close-on-shutdown=false",
      "management.endpoints.web.exposure.include=health,locks",
      "management.endpoint.locks.access=unrestricted",
      "management.endpoint.health.show-components=always",
      // Spring Data Redis is on the test class path (for the reuse tests); its connection factory
      // would point at localhost:6379, a server this test did not start.
      "spring.autoconfigure.exclude="
          + "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"
    })
@AutoConfigureMockMvc
class LocksEndpointHttpTest {
  @Autowired MockMvc mvc;
  @Autowired Latchkey latchkey;

  @Test
  void operatorsListAndInspectOnlyAdminsForceRelease() throws Exception {
    Lease lease = latchkey.lock("orders/42").acquire(Duration.ofSeconds(1));
    try {
      mvc.perform(get("/actuator/locks")).andExpect(status().isUnauthorized());
      mvc.perform(get("/actuator/locks").header("Authorization", basic("operator")))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.locks[0].name").value("orders/42"))
          .andExpect(jsonPath("$.locks[0].holders[0].fencingToken").value(lease.fencingToken()));
      mvc.perform(get("/actuator/locks/orders/42").header("Authorization", basic("operator")))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.holders[0].mode").value("EXCLUSIVE"));
      mvc.perform(get("/actuator/locks/orders/43").header("Authorization", basic("operator")))
          .andExpect(status().isNotFound());
      mvc.perform(post("/actuator/locks/orders/42").header("Authorization", basic("operator")))
          .andExpect(status().isForbidden());
      mvc.perform(delete("/actuator/locks/orders/42")).andExpect(status().isUnauthorized());
      mvc.perform(post("/actuator/locks/orders/42").header("Authorization", basic("admin")))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.released").value(true));
      mvc.perform(delete("/actuator/locks/orders/42").header("Authorization", basic("admin")))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.released").value(false));
      mvc.perform(get("/actuator/health/latchkey").header("Authorization", basic("operator")))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.status").value("UP"));
    } finally {
      try {
        lease.release();
      } catch (io.latchkey.LeaseLostException forceReleased) {
        // expected: the admin force-released it
      }
    }
  }

  private static String basic(String user) {
    return "Basic "
        + Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8));
  }

  /** An application with the usual split: reads for operators, writes for admins. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    SecurityFilterChain actuatorSecurity(HttpSecurity http) throws Exception {
      http.securityMatcher(EndpointRequest.toAnyEndpoint())
          .authorizeHttpRequests(
              requests ->
                  requests
                      .requestMatchers(HttpMethod.GET, "/actuator/**")
                      .hasAnyRole("OPERATOR", "ADMIN")
                      .anyRequest()
                      .hasRole("ADMIN"))
          .httpBasic(Customizer.withDefaults())
          .csrf(csrf -> csrf.disable());
      return http.build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
      return new InMemoryUserDetailsManager(
          User.withUsername("operator").password("{noop}secret").roles("OPERATOR").build(),
          User.withUsername("admin").password("{noop}secret").roles("ADMIN").build());
    }
  }
}
