/**
 * Process-crash and multi-instance proofs of transactional mode: a payments application
 * run as separate JVMs that the tests kill with SIGKILL at chosen points, counting rows
 * in the database afterwards.
 */
@NullMarked
package dev.idempo.web.transactional.crash;

import org.jspecify.annotations.NullMarked;
