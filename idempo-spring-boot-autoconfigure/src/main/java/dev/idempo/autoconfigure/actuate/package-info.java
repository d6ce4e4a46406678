/**
 * Auto-configuration for idempo: the idempo Actuator endpoint and health indicator.
 */
@NullMarked
package dev.idempo.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
