package dev.idempo.web;

import org.springframework.test.context.TestPropertySource;

/**
 * The HTTP contract on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryIdempotencyHttpTests extends IdempotencyHttpContractTests {

}
