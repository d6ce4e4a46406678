/**
 * Tests of transactional mode ({@code @Idempotent(transactional = true)}) against real
 * PostgreSQL and MySQL/MariaDB servers, counting rows in the database.
 */
@NullMarked
package dev.idempo.web.transactional;

import org.jspecify.annotations.NullMarked;
