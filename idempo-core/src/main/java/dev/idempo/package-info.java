/**
 * Idempotency keys for Spring MVC handlers, and for bean methods and blocks of code
 * outside the web layer.
 */
@NullMarked
package dev.idempo;

import org.jspecify.annotations.NullMarked;
