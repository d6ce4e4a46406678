package dev.idempo.webflux;

import org.springframework.test.context.TestPropertySource;

/**
 * Streamed request bodies on WebFlux, on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryWebFluxStreamedBodyHttpTests extends WebFluxStreamedBodyHttpContract {

}
