/**
 * Auto-configuration for idempo: idempotent methods and the IdempotencyTemplate.
 */
@NullMarked
package dev.idempo.autoconfigure.method;

import org.jspecify.annotations.NullMarked;
