/**
 * Auto-configuration for idempo: the PostgreSQL and MySQL/MariaDB store.
 */
@NullMarked
package dev.idempo.autoconfigure.store.jdbc;

import org.jspecify.annotations.NullMarked;
