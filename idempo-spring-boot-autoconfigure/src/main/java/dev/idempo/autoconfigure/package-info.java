/**
 * Auto-configuration for idempo.
 */
@NullMarked
package dev.idempo.autoconfigure;

import org.jspecify.annotations.NullMarked;
