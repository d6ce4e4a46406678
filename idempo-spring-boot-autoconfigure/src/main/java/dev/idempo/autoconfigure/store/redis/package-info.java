/**
 * Auto-configuration for idempo: the Redis store.
 */
@NullMarked
package dev.idempo.autoconfigure.store.redis;

import org.jspecify.annotations.NullMarked;
