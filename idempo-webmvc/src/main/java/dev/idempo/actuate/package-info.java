/**
 * Actuator support: the store's health.
 */
@NullMarked
package dev.idempo.actuate;

import org.jspecify.annotations.NullMarked;
