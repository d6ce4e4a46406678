/**
 * {@link dev.idempo.store.jdbc.JdbcLockingStore}, a {@link dev.idempo.store.LockingStore}
 * on PostgreSQL (advisory locks) or MySQL/MariaDB ({@code GET_LOCK}), with completed
 * responses kept in a table.
 * <h2>The classes, one job each</h2> Built in this order, each on the ones before it:
 * <ul>
 * <li>{@code JdbcDialect} ({@code PostgresDialect}, {@code MySqlDialect}): SQL text,
 * statement building, result decoding by step name, session settings, lock name or id
 * derivation and error classification, no control flow; {@code SqlPipeline} sends a few
 * statements in one round trip;</li>
 * <li>{@code KeyGuard}: owns the life of every claim of this JVM, an immutable holder per
 * key with one atomic phase that only the guard changes;</li>
 * <li>{@code Operation}: one claim, complete or release waiting for a session, with its
 * compare-and-set life and its outcome;</li>
 * <li>{@code UnlockQueue}: the unlocks that wait for one lock session;</li>
 * <li>{@code LockSession} and {@code LockSessionPool}: the dedicated lock sessions,
 * opened on demand, with a generation number per connection, discarded when dead;</li>
 * <li>{@code BatchRunner}: runs what is queued on a session held by the calling thread
 * and settles every operation, also when a batch fails;</li>
 * <li>{@code SessionScheduler}: which thread runs which operation on which session, and
 * when; {@code BatchScheduler} (the default) combines the operations of many requests
 * into batches, {@code PlainScheduler} ({@code idempo.store.jdbc.batching=false}) runs
 * each alone, one statement per round trip, and is the oracle the batched one is tested
 * against;</li>
 * <li>{@code ExpiredRecordCleanup}: deletion of expired rows in bounded batches, on a
 * connection of its own;</li>
 * <li>{@code JdbcLockingStore}: the store; claim, complete, release, renew and close,
 * composed of the classes above;</li>
 * <li>{@code TransactionalRecords}: transactional mode's statements, on the application's
 * own transaction, through the dialects.</li>
 * </ul>
 * <h2>Connection discipline</h2> A session-level lock lives as long as the database
 * session that took it, so a request's lock cannot live on a connection borrowed from the
 * application's pool for the length of the request: with as many in-flight requests as
 * pooled connections, handlers that query the database themselves would wait for a
 * connection that only they can free. Instead each store keeps a small, fixed set of
 * dedicated <em>lock sessions</em>
 * ({@link dev.idempo.store.jdbc.JdbcStoreSettings#lockSessions()}), opened on demand from
 * the store's own {@link javax.sql.DataSource} and shared by all requests: a claim runs
 * its statements on whichever lock session is free and leaves its lock there; the
 * request's complete or release later runs on the same session. Statements on one session
 * are serialised, each waits at most
 * {@link dev.idempo.store.jdbc.JdbcStoreSettings#timeout()}, and nothing a store does
 * waits for the application's pool, so a request can never hold something another
 * request's store operation needs while it waits for the pool. Because these locks are
 * re-entrant within a session, an in-JVM guard (storage key to owner token) keeps two
 * requests of one JVM from claiming one key through the same session.
 * <h2>Failure</h2> If a lock session dies, the database frees its locks and every claim
 * on it is lost: complete and release answer {@code false} and store nothing, and the key
 * can be claimed again at once by other instances and, as soon as this instance notices
 * (on the session's next statement, or by the check every
 * {@link dev.idempo.store.jdbc.JdbcStoreSettings#sessionCheckInterval()}), here too. An
 * instance that vanishes without closing its connections (host lost, network cut) cannot
 * be noticed by the database until TCP gives up, so lock sessions ask the server to end
 * them after four session check intervals (at least a minute) without a statement
 * ({@code idle_session_timeout} on PostgreSQL 14+, {@code wait_timeout} on
 * MySQL/MariaDB); live instances ping their idle sessions every check interval. Claims
 * never expire otherwise, so {@code leaseExpires()} is {@code false} and {@code renew}
 * only reports, without a round trip, whether the claim is still held. A statement that
 * fails on a live session is undone where it can be. An unlock that fails there, or that
 * cannot run because the session stays busy, is queued on the session and runs before its
 * next statement (or on the maintenance thread once it is free); until then the key stays
 * taken, and the session with its other claims is kept. A session is closed only when it
 * is dead (closed by its driver, a connection error, several failed pings), never because
 * a statement was slow; its locks are freed by statement before it is closed, in case its
 * connection outlives {@code close()}. A queued unlock whose lock another claim of this
 * JVM shares on the session (colliding PostgreSQL lock ids) ends the session instead of
 * running. A claim, complete or release whose session dies while it is settled leaves the
 * in-JVM guard with its lock. An unexpected failure of a batch (a bug, an {@link Error})
 * settles every operation of it first: one that may hold its lock keeps its key taken
 * until its queued unlock has run, and a claim whose caller gets the failure after its
 * lock was taken gives it back the same way. Infrastructure failures surface as
 * {@link dev.idempo.store.LockingStoreException}.
 * <p>
 * Lock sessions must be database sessions of their own: closing one must end it, which is
 * what frees its locks for sure. The store's {@link javax.sql.DataSource} should
 * therefore not be a connection pool; the auto-configuration never hands it one.
 * <h2>Maintenance</h2> Two daemon threads per store check idle lock sessions, run queued
 * unlocks and delete expired rows in bounded batches; {@code close()} stops it and closes
 * the lock sessions, which frees their locks.
 */
@NullMarked
package dev.idempo.store.jdbc;

import org.jspecify.annotations.NullMarked;
