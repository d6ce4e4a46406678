/**
 * Applications that start while their store is down.
 */
@NullMarked
package dev.idempo.web.outage;

import org.jspecify.annotations.NullMarked;
