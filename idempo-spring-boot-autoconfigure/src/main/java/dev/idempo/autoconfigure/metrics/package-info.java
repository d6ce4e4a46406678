/**
 * Auto-configuration for idempo: Micrometer meters.
 */
@NullMarked
package dev.idempo.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
