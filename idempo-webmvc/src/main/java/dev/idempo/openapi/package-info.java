/**
 * OpenAPI documentation of idempotent operations, for springdoc-openapi.
 */
@NullMarked
package dev.idempo.openapi;

import org.jspecify.annotations.NullMarked;
