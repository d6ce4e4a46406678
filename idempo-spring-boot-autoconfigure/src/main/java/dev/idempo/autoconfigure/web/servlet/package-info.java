/**
 * Auto-configuration for idempo: the Spring MVC request flow.
 */
@NullMarked
package dev.idempo.autoconfigure.web.servlet;

import org.jspecify.annotations.NullMarked;
