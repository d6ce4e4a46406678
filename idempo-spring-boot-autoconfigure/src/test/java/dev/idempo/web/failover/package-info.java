/**
 * The Redis store across a Sentinel failover.
 */
@NullMarked
package dev.idempo.web.failover;

import org.jspecify.annotations.NullMarked;
