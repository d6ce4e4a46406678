/**
 * Auto-configuration for idempo: the WebFlux request flow and the Spring Cloud Gateway
 * filters.
 */
@NullMarked
package dev.idempo.autoconfigure.web.reactive;

import org.jspecify.annotations.NullMarked;
