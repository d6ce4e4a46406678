/**
 * Hostile keys and bodies sent over raw sockets against every store.
 */
@NullMarked
package dev.idempo.web.hostile;

import org.jspecify.annotations.NullMarked;
