/**
 * HTTP idempotency keys for Spring MVC.
 */
@NullMarked
package dev.idempo;

import org.jspecify.annotations.NullMarked;
