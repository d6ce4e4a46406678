/**
 * A {@link dev.idempo.store.LockingStore} in Redis, through Spring Data Redis.
 */
@NullMarked
package dev.idempo.store.redis;

import org.jspecify.annotations.NullMarked;
