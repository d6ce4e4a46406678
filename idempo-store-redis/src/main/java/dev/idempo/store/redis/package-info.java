/**
 * A {@link dev.idempo.store.LockingStore} in Redis, through Spring Data Redis
 * ({@link dev.idempo.store.redis.RedisLockingStore}), and its non-blocking twin
 * ({@link dev.idempo.store.redis.ReactiveRedisLockingStore}) over the same keys: both run
 * the Lua scripts beside them and read their replies through {@code RedisScripts}.
 */
@NullMarked
package dev.idempo.store.redis;

import org.jspecify.annotations.NullMarked;
