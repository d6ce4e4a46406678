/**
 * Actuator support: the store's health and the {@code idempo} endpoint, on every stack
 * (they use no servlet or reactive web type).
 */
@NullMarked
package dev.idempo.actuate;

import org.jspecify.annotations.NullMarked;
