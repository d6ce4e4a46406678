package dev.idempo.test;

import org.springframework.test.context.TestPropertySource;

/**
 * Spring MVC's errors written as {@code ProblemDetail} bodies by Boot's exception handler
 * ({@code spring.mvc.problemdetails.enabled}).
 */
@TestPropertySource(properties = "spring.mvc.problemdetails.enabled=true")
class ProblemDetailsErrorResponsesMockMvcTests extends AbstractErrorResponsesMockMvcTests {

}
