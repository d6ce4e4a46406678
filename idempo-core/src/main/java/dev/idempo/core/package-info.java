/**
 * The per-request flow: key parsing, request fingerprints, the stored response format and
 * metrics.
 */
@NullMarked
package dev.idempo.core;

import org.jspecify.annotations.NullMarked;
