/**
 * The calling side: an interceptor for {@code RestClient} and {@code RestTemplate} that
 * sends idempotency keys, derives them from the idempotent execution running on the
 * thread, and retries what is safe to retry.
 */
@NullMarked
package dev.idempo.client;

import org.jspecify.annotations.NullMarked;
