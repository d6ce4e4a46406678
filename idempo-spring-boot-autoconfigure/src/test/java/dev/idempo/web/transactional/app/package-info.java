/**
 * The application of the transactional-mode HTTP tests: payments written through JDBC and
 * JPA by {@code @Idempotent(transactional = true)} handlers, with test-controlled pauses.
 */
@NullMarked
package dev.idempo.web.transactional.app;

import org.jspecify.annotations.NullMarked;
