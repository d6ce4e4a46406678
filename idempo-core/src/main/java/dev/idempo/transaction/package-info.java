/**
 * Transactional mode, shared by web handlers and idempotent methods: the key claimed and
 * the record written in the application's own transaction.
 */
@NullMarked
package dev.idempo.transaction;

import org.jspecify.annotations.NullMarked;
