/**
 * Auto-configuration for idempo: springdoc's description of idempotent operations.
 */
@NullMarked
package dev.idempo.autoconfigure.openapi;

import org.jspecify.annotations.NullMarked;
