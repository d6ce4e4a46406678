/**
 * The one request flow that every entry point runs, whatever its stack: what a key and a
 * claim decide ({@link dev.idempo.flow.RequestFlow}), how a key is claimed and its record
 * committed ({@link dev.idempo.flow.ClaimMode}, with a blocking face,
 * {@link dev.idempo.flow.PlainClaimMode}, and a reactive one,
 * {@link dev.idempo.flow.ReactiveClaimMode}), how long a claim waits for another, and the
 * one lease renewal ({@link dev.idempo.flow.LeaseRenewer}). The Spring MVC interceptor,
 * the WebFlux and gateway filters, idempotent methods and the template are adapters over
 * it: they turn their request into its input and its decisions into their answers. Only
 * this package (and the stores) matches on {@link dev.idempo.store.ClaimResult}'s
 * variants.
 */
@NullMarked
package dev.idempo.flow;

import org.jspecify.annotations.NullMarked;
