/**
 * The Spring MVC integration: filter, handler interceptor and response body advice.
 */
@NullMarked
package dev.idempo.web;

import org.jspecify.annotations.NullMarked;
