package dev.idempo.web;

import org.springframework.test.context.TestPropertySource;

/**
 * The configured response and fingerprint policies on the in-memory store.
 *
 * @author idempo
 */
@TestPropertySource(properties = "idempo.store.type=memory")
class MemoryResponsePolicyHttpTests extends ResponsePolicyHttpTests {

}
