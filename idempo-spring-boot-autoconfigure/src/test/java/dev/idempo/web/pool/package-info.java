/**
 * The pool-starvation proof of the SQL stores: an application with a four-connection pool
 * whose idempotent handler queries the database itself.
 */
@NullMarked
package dev.idempo.web.pool;

import org.jspecify.annotations.NullMarked;
