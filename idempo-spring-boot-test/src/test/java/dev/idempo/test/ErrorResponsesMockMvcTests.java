package dev.idempo.test;

/**
 * Spring MVC's errors as Boot configures them by default: {@code sendError}, rendered by
 * no error page under MockMvc.
 */
class ErrorResponsesMockMvcTests extends AbstractErrorResponsesMockMvcTests {

}
