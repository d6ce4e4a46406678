/**
 * Testing applications that use idempo: keys for MockMvc requests, matchers for replays
 * and problem responses, an in-memory store emptied between tests, and
 * {@code dev.idempo.store.LockingStoreContractTest} (on the class path with this module)
 * for custom stores.
 */
@NullMarked
package dev.idempo.test;

import org.jspecify.annotations.NullMarked;
