package dev.idempo.webflux;

import org.springframework.test.context.TestPropertySource;

/**
 * {@code idempo.routes} in a WebFlux application on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryWebFluxRoutesHttpTests extends WebFluxRoutesHttpContractTests {

}
