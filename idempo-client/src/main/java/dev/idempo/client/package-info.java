/**
 * The calling side: an interceptor for {@code RestClient} and {@code RestTemplate}, and a
 * filter for {@code WebClient}, that send idempotency keys, derive them from the
 * idempotent execution the call is made in (on the thread, or in the Reactor context),
 * and retry what is safe to retry.
 */
@NullMarked
package dev.idempo.client;

import org.jspecify.annotations.NullMarked;
