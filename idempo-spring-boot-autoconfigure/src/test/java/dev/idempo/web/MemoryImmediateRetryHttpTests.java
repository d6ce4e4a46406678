package dev.idempo.web;

import org.springframework.test.context.TestPropertySource;

/**
 * Immediate retries after responses that are not stored, on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryImmediateRetryHttpTests extends ImmediateRetryHttpTests {

}
