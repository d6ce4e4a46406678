/**
 * A Spring Cloud Gateway (server-webmvc) route protected by {@code idempo.routes}.
 */
@NullMarked
package dev.idempo.web.gateway;

import org.jspecify.annotations.NullMarked;
