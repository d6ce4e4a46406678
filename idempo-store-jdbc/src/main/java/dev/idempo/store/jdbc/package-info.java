/**
 * {@link dev.idempo.store.jdbc.JdbcLockingStore}, a {@link dev.idempo.store.LockingStore}
 * on PostgreSQL (advisory locks) or MySQL/MariaDB ({@code GET_LOCK}): a claim is a
 * session-level lock held on one of a few dedicated lock sessions, never on a connection
 * of the application's pool, and a completed response is a row of a table. The classes,
 * each built on the ones before it:
 * <ul>
 * <li>{@code SqlPipeline}: runs a few statements in one round trip;</li>
 * <li>{@code JdbcDialect}, {@code PostgresDialect}, {@code MySqlDialect}: build the
 * statements of one database and read their answers;</li>
 * <li>{@code KeyGuard}: lets one claim per key of this JVM into the database;</li>
 * <li>{@code Operation}: one claim, complete or release waiting for a session;</li>
 * <li>{@code UnlockQueue}: the unlocks waiting for one lock session;</li>
 * <li>{@code LockSession}, {@code LockSessionPool}: one lock session, and all of
 * them;</li>
 * <li>{@code BatchRunner}: runs a batch on a session and settles every operation;</li>
 * <li>{@code SessionScheduler}, {@code BatchScheduler}, {@code PlainScheduler}: which
 * thread runs which operation on which session;</li>
 * <li>{@code ExpiredRecordCleanup}: deletes expired rows;</li>
 * <li>{@code JdbcLockingStore}: the store, composed of the above;</li>
 * <li>{@code TransactionalRecords}: transactional mode's statements.</li>
 * </ul>
 * Why it is built this way, and what happens when a session or a batch fails: "Design
 * notes of the packages" in {@code CONTRIBUTING.md}.
 */
@NullMarked
package dev.idempo.store.jdbc;

import org.jspecify.annotations.NullMarked;
