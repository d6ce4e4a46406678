package dev.idempo.web;

import org.springframework.test.context.TestPropertySource;

/**
 * Streamed request bodies on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryStreamedBodyHttpTests extends StreamedBodyHttpContract {

}
