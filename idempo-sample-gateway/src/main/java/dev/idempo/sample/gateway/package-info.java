/**
 * The sample gateway: Spring Cloud Gateway routes protected by idempo.
 */
@NullMarked
package dev.idempo.sample.gateway;

import org.jspecify.annotations.NullMarked;
