package dev.idempo.store.jdbc;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.idempo.store.LockingStoreException;
import dev.idempo.store.StoredRecord;
import dev.idempo.store.jdbc.JdbcDialect.BatchAnswer;
import dev.idempo.store.jdbc.JdbcDialect.Held;
import dev.idempo.store.jdbc.JdbcDialect.Lock;
import dev.idempo.store.jdbc.JdbcDialect.SessionInfo;
import dev.idempo.store.jdbc.JdbcDialect.Store;
import dev.idempo.store.jdbc.KeyGuard.Holder;
import dev.idempo.store.jdbc.KeyGuard.State;
import dev.idempo.store.jdbc.SqlPipeline.Answers;
import dev.idempo.store.jdbc.SqlPipeline.Script;
import dev.idempo.store.jdbc.SqlPipeline.Sql;

/**
 * Runs batches of queued operations on a lock session held by the calling thread and
 * settles every operation (its outcome to its waiter, its holder to its next phase), also
 * when the batch fails: then from what the database holds, as "The JDBC store's batching
 * core" in {@code CONTRIBUTING.md} describes.
 *
 * @author idempo
 */
final class BatchRunner {

	private static final Log logger = LogFactory.getLog(BatchRunner.class);

	static final int MAX_CLAIMS = 64;

	static final int MAX_UNLOCKS = 256;

	static final int MAX_COMPLETES = 64;

	/** Record bytes per batch beyond its first complete; far below any packet limit. */
	static final long MAX_STORE_BYTES = 2L * 1024 * 1024;

	private static final String HELD = "held";

	private static final String RECORDS = "records";

	private final JdbcDialect dialect;

	private final KeyGuard guard;

	private final LockSessionPool pool;

	private final long timeoutNanos;

	private final boolean pipelined;

	/** {@code pipelined}: a batch in one round trip where the connection allows it. */
	BatchRunner(JdbcDialect dialect, KeyGuard guard, LockSessionPool pool, JdbcStoreSettings settings,
			boolean pipelined) {
		this.dialect = dialect;
		this.guard = guard;
		this.pool = pool;
		this.timeoutNanos = settings.timeout().toNanos();
		this.pipelined = pipelined;
	}

	private boolean together(LockSession session) {
		return this.pipelined && session.info().multiStatements();
	}

	/** Runs one batch of what is queued for the session, which the caller holds. */
	void runBatch(LockSession session) {
		runSettled(session, take(session));
	}

	/** Runs one operation alone; a claim whose session died is left queued to rerun. */
	void runAlone(LockSession session, Operation operation) {
		Batch batch = new Batch(false);
		if (operation.start()) {
			batch.add(operation);
		}
		batch.unlocks.addAll(takeUnlocks(session));
		runSettled(session, batch);
	}

	private void runSettled(LockSession session, Batch batch) {
		if (batch.isEmpty()) {
			return;
		}
		try {
			run(session, batch);
		}
		catch (RuntimeException | Error ex) {
			// a bug or a JVM failure: nothing may be left running, nor any lock behind
			failUnsettled(session, batch, ex);
			throw ex;
		}
	}

	/** Ends queued operations and discards each session let go within the timeout. */
	void close() {
		this.pool.close();
		Batch queued = new Batch(true);
		takeAll(this.pool.claims(), queued.claims, Integer.MAX_VALUE);
		for (LockSession session : this.pool.sessions()) {
			takeAll(session.completes(), queued.completes, Integer.MAX_VALUE);
			takeAll(session.releases(), queued.releases, Integer.MAX_VALUE);
		}
		closed(queued);
		for (LockSession session : this.pool.sessions()) {
			try {
				if (session.tryRun(this.timeoutNanos)) {
					try {
						this.pool.discard(session);
						session.unlocks().clear(this.guard);
					}
					finally {
						session.endRun();
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private Batch take(LockSession session) {
		Batch batch = new Batch(true);
		long bytes = 0;
		Queue<Operation> completes = session.completes();
		Operation operation;
		while (batch.completes.size() < MAX_COMPLETES && (operation = completes.peek()) != null) {
			StoredRecord record = operation.record;
			long size = (record != null) ? record.response().length : 0;
			if (!batch.completes.isEmpty() && bytes + size > MAX_STORE_BYTES) {
				break;
			}
			completes.remove(operation);
			if (operation.start()) {
				batch.completes.add(operation);
				bytes += size;
			}
		}
		takeAll(session.releases(), batch.releases, MAX_UNLOCKS);
		batch.unlocks.addAll(takeUnlocks(session));
		takeAll(this.pool.claims(), batch.claims, MAX_CLAIMS);
		return batch;
	}

	/** Takes queued unlocks; ends the session instead if one's lock is shared. */
	private List<Holder> takeUnlocks(LockSession session) {
		List<Holder> unlocks = session.unlocks().take(session.generation(), this.guard, MAX_UNLOCKS);
		if (unlocks == null) {
			lost(session, "closed to free a queued unlock whose lock collides with another claim's", null);
			return List.of();
		}
		return unlocks;
	}

	private static void takeAll(Queue<Operation> queue, List<Operation> into, int max) {
		Operation operation;
		while (into.size() < max && (operation = queue.poll()) != null) {
			if (operation.start()) {
				into.add(operation);
			}
		}
	}

	private void run(LockSession session, Batch batch) {
		if (this.pool.isClosed()) {
			closed(batch);
			return;
		}
		// completes and releases whose claim's connection is gone lost their lock with it
		batch.completes.removeIf((complete) -> lostAlready(session, complete));
		batch.releases.removeIf((release) -> lostAlready(session, release));
		boolean opened = false;
		if (!session.isOpen() && !batch.claims.isEmpty()) {
			// a claim whose caller no longer waits opens no connection
			batch.claims.removeIf((claim) -> {
				if (claim.isAwaited()) {
					return false;
				}
				claim.fail(new LockingStoreException("Timed out waiting for an idempotency lock session"));
				return true;
			});
		}
		if (!session.isOpen() && !batch.claims.isEmpty()) {
			try {
				opened = this.pool.openIfNeeded(session);
			}
			catch (LockingStoreException ex) {
				for (Operation claim : batch.claims) {
					claim.fail(ex);
				}
				return;
			}
		}
		if (!batch.isEmpty()) {
			execute(session, batch, opened, batch.size() > 1);
		}
	}

	private boolean lostAlready(LockSession session, Operation operation) {
		Holder holder = operation.holder;
		if (session.isOpen() && holder.generation() == session.generation()) {
			return false;
		}
		finished(operation, false);
		return true;
	}

	/** Ends a complete or release, guard first: its woken waiter finds the key free. */
	private void finished(Operation operation, boolean succeeded) {
		this.guard.forget(operation.holder);
		operation.succeed(succeeded, null);
	}

	private void closed(Batch batch) {
		for (Operation claim : batch.claims) {
			claim.fail(new LockingStoreException("The idempotency store is closed"));
		}
		for (Operation operation : batch.finishing()) {
			finished(operation, false);
		}
		batch.unlocks.forEach(this.guard::forget);
	}

	/**
	 * Sends one batch and settles it. {@code opened}: this batch opened the connection;
	 * {@code rerun}: after a failure, unsettled operations run again one by one (else
	 * fail).
	 */
	private void execute(LockSession session, Batch batch, boolean opened, boolean rerun) {
		SessionInfo info = session.info();
		long generation = session.generation();
		List<Lock> claims = new ArrayList<>(batch.claims.size());
		for (Operation claim : batch.claims) {
			Object lock = this.dialect.lockOf(info, claim.holder.key);
			this.guard.sent(claim.holder, session.index(), generation, lock);
			claims.add(new Lock(claim.holder.key, lock));
		}
		List<Object> unlocks = new ArrayList<>(batch.releases.size() + batch.unlocks.size());
		batch.releases.forEach((release) -> unlocks.add(lockOf(release.holder)));
		batch.unlocks.forEach((holder) -> unlocks.add(lockOf(holder)));
		// one order for everyone, so that two batches never wait for each other's rows
		batch.completes.sort(Comparator.comparing((Operation complete) -> complete.holder.key));
		List<Store> stores = new ArrayList<>(batch.completes.size());
		for (Operation complete : batch.completes) {
			StoredRecord record = complete.record;
			if (record == null) {
				throw new IllegalStateException("Complete without a record");
			}
			stores.add(new Store(complete.holder.key, lockOf(complete.holder), record, complete.ttlMicros));
		}
		Script script = this.dialect.batch(claims, unlocks, stores);
		BatchAnswer answer;
		try {
			Answers answers = script.run(session.connection(), together(session), 0);
			answer = this.dialect.readBatch(answers, claims, unlocks.size(), stores);
		}
		catch (SQLException | RuntimeException ex) {
			recover(session, batch, ex, opened, rerun);
			return;
		}
		settle(session, batch, answer);
	}

	private static Object lockOf(Holder holder) {
		Object lock = holder.lock();
		if (lock == null) {
			throw new IllegalStateException("Claim without a lock");
		}
		return lock;
	}

	private void settle(LockSession session, Batch batch, BatchAnswer answer) {
		for (int i = 0; i < batch.completes.size(); i++) {
			Operation complete = batch.completes.get(i);
			if (answer.stored()[i] && !answer.storeUnlocked()[i]) {
				logger.warn("An idempotency lock was not held by its lock session when its response was stored");
			}
			finished(complete, answer.stored()[i]);
		}
		for (int i = 0; i < batch.releases.size(); i++) {
			Operation release = batch.releases.get(i);
			boolean released = answer.unlocked()[i];
			if (!released) {
				logger.warn("An idempotency lock was not held by its lock session when released");
			}
			finished(release, released);
		}
		session.unlocks().ran(batch.unlocks, this.guard);
		boolean giveBack = false;
		for (int i = 0; i < batch.claims.size(); i++) {
			giveBack |= settleClaim(session, batch.claims.get(i), answer.claimLocked()[i], answer.claimRecords()[i]);
		}
		if (giveBack) {
			runUnlocks(session);
		}
	}

	/**
	 * Ends a claim by its batch's answer: whether it locked, and the record it found.
	 * @return whether its lock must be given back (its owner completed between the
	 * claim's two statements)
	 */
	private boolean settleClaim(LockSession session, Operation claim, @Nullable Boolean locked,
			@Nullable StoredRecord record) {
		boolean giveBack = false;
		if (Boolean.TRUE.equals(locked)) {
			if (record != null) {
				this.guard.unlocking(claim.holder);
				session.unlocks().add(claim.holder);
				giveBack = true;
			}
			else {
				this.guard.held(claim.holder);
			}
		}
		if (locked == null && record == null) {
			claim.vanished();
		}
		else {
			claim.succeed(Boolean.TRUE.equals(locked) && record == null, record);
		}
		return giveBack;
	}

	private void runUnlocks(LockSession session) {
		Batch batch = new Batch(false);
		batch.unlocks.addAll(takeUnlocks(session));
		if (!batch.isEmpty()) {
			try {
				execute(session, batch, false, true);
			}
			catch (RuntimeException | Error ex) {
				putBack(session, batch.unlocks);
				throw ex;
			}
		}
	}

	private void recover(LockSession session, Batch batch, Exception failure, boolean opened, boolean rerun) {
		if (session.isDead(failure)) {
			died(session, batch, failure, opened, "failed while running a batch");
			return;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("A batch of " + batch.size() + " operation(s) failed on idempotency " + session
					+ "; settling it from what the database holds", failure);
		}
		Facts facts = factsOrSettled(session, batch, failure, opened);
		if (facts == null) {
			return;
		}
		Batch again = new Batch(batch.shared);
		Recovery recovery = new Recovery();
		recoverCompletes(batch, facts, recovery, again, rerun);
		recoverReleases(batch, facts, recovery, again, rerun);
		List<Holder> stillLocked = recoverUnlocks(batch, facts);
		recoverClaims(batch, facts, recovery, again, rerun);
		if (!stillLocked.isEmpty() && session.unlocks().failed(stillLocked)) {
			lost(session, "could not run queued unlocks", failure);
		}
		finishRecovery(session, recovery, again, failure);
	}

	/**
	 * Reads the facts of a failed batch; {@code null}: they could not be read, or one of
	 * its locks is shared, and the batch was settled without them.
	 */
	private @Nullable Facts factsOrSettled(LockSession session, Batch batch, Exception failure, boolean opened) {
		try {
			// ends the transaction the batch may have left open
			SqlPipeline.run(session.connection(), together(session), 0, this.dialect.rollback());
		}
		catch (SQLException | RuntimeException ex) {
			failure.addSuppressed(ex);
			// an open transaction's rows would commit with a later statement, after their
			// locks were freed (a complete alone on MySQL joins it): only closing the
			// session ends it for sure
			died(session, batch, failure, opened, "could not roll back a failed batch");
			return null;
		}
		Facts facts;
		try {
			facts = facts(session, batch);
		}
		catch (SQLException | RuntimeException ex) {
			failure.addSuppressed(ex);
			if (session.isDead(ex)) {
				died(session, batch, failure, opened, "failed while recovering from a failed batch");
			}
			else {
				unknown(session, batch, failure);
			}
			return null;
		}
		if (facts == null) {
			died(session, batch, failure, opened, "closed to settle a failed batch whose locks collide");
		}
		return facts;
	}

	/**
	 * Decides from the facts what becomes of each complete of a failed batch: committed,
	 * lost, run again or failed.
	 */
	private void recoverCompletes(Batch batch, Facts facts, Recovery recovery, Batch again, boolean rerun) {
		for (Operation complete : batch.completes) {
			Held held = facts.of(complete.holder);
			StoredRecord record = facts.records().get(complete.holder.key);
			if (record != null && record.equals(complete.record)) {
				// committed before the failure
				if (held != Held.NOT_HELD) {
					recovery.free(complete.holder, true);
				}
				else {
					this.guard.forget(complete.holder);
				}
				recovery.stored.add(complete);
			}
			else if (held == Held.NOT_HELD) {
				finished(complete, false);
			}
			else if (rerun) {
				if (held == Held.HELD_SPENT) {
					recovery.restore.add(lockOf(complete.holder));
				}
				again.completes.add(complete);
			}
			else {
				// a store that fails alone is rolled back and frees its lock
				recovery.free(complete.holder, true);
				recovery.failed.add(complete);
			}
		}
	}

	/**
	 * Decides from the facts what becomes of each release of a failed batch: one whose
	 * lock is no longer held has run, the rest run again or fail.
	 */
	private void recoverReleases(Batch batch, Facts facts, Recovery recovery, Batch again, boolean rerun) {
		for (Operation release : batch.releases) {
			if (facts.of(release.holder) == Held.NOT_HELD) {
				finished(release, true);
			}
			else {
				(rerun ? again.releases : recovery.failed).add(release);
			}
		}
	}

	/**
	 * Forgets each queued unlock of a failed batch whose lock is no longer held (it has
	 * run); returns the others, still locked.
	 */
	private List<Holder> recoverUnlocks(Batch batch, Facts facts) {
		List<Holder> stillLocked = new ArrayList<>();
		for (Holder holder : batch.unlocks) {
			if (facts.of(holder) != Held.NOT_HELD) {
				stillLocked.add(holder);
			}
			else {
				this.guard.forget(holder);
			}
		}
		return stillLocked;
	}

	/**
	 * Decides from the facts what becomes of each claim of a failed batch: its lock, if
	 * held, is freed, and the claim runs again or fails.
	 */
	private void recoverClaims(Batch batch, Facts facts, Recovery recovery, Batch again, boolean rerun) {
		for (Operation claim : batch.claims) {
			if (facts.of(claim.holder) != Held.NOT_HELD) {
				// taken by this batch; the store forgets the holder of a failed claim
				recovery.free(claim.holder, false);
			}
			(rerun ? again.claims : recovery.failed).add(claim);
		}
	}

	/**
	 * Carries out what settling a failed batch decided: frees its locks, answers its
	 * committed completes, fails its failed operations, then runs the rest again one by
	 * one unless locks that could not be freed stay queued.
	 */
	private void finishRecovery(LockSession session, Recovery recovery, Batch again, Exception failure) {
		boolean settled = session.isOpen() && settleLocks(session, recovery, failure);
		for (Operation complete : recovery.stored) {
			complete.succeed(true, null);
		}
		if (!session.isOpen()) {
			// the locks still to be freed died with the session
			recovery.forget.forEach(this.guard::forget);
		}
		else if (!settled) {
			// locks that could not be freed stay queued: run nothing more now
			recovery.failed.addAll(again.all());
			failAll(session, recovery.failed, failure);
			return;
		}
		failAll(session, recovery.failed, failure);
		rerunAlone(session, again, failure);
	}

	/**
	 * Runs each operation of a failed batch left to run again alone, so that a failure is
	 * charged to the operation that causes it.
	 */
	private void rerunAlone(LockSession session, Batch again, Exception failure) {
		for (Operation operation : again.all()) {
			Batch one = new Batch(again.shared);
			one.add(operation);
			if (session.isOpen()) {
				execute(session, one, false, false);
			}
			else {
				died(session, one, failure, false, "failed while rerunning a failed batch");
			}
		}
	}

	/**
	 * Fails each operation as it fails alone; a complete or release that may hold its
	 * lock keeps its key taken until its queued unlock has run (a claim's is freed or
	 * queued).
	 */
	private void failAll(LockSession session, List<Operation> failed, Exception failure) {
		for (Operation operation : failed) {
			if (operation.isDone()) {
				continue;
			}
			if (operation.kind != Operation.Kind.CLAIM) {
				holdUntilUnlocked(session, operation.holder);
			}
			operation.fail(switch (operation.kind) {
				case CLAIM -> new LockingStoreException("Could not claim an idempotency key", failure);
				// a driver failing in an unexpected way surfaces as it is
				case COMPLETE -> (failure instanceof RuntimeException runtime) ? runtime
						: new LockingStoreException("Could not store an idempotent response", failure);
				case RELEASE -> new LockingStoreException("Could not release an idempotency lock; the unlock is "
						+ "retried before the next statement of its lock session", failure);
			});
		}
	}

	/** Keeps the holder's key taken until its queued unlock has run. */
	private void holdUntilUnlocked(LockSession session, Holder holder) {
		if (holder.state() == State.GONE || holder.state() == State.UNLOCKING) {
			return;
		}
		if (!session.isOpen() || holder.generation() != session.generation()) {
			this.guard.forget(holder);
			return;
		}
		this.guard.unlocking(holder);
		session.unlocks().add(holder);
	}

	/** Reads the facts of a failed batch; {@code null} if one of its locks is shared. */
	private @Nullable Facts facts(LockSession session, Batch batch) throws SQLException {
		SessionInfo info = session.info();
		List<Object> locks = new ArrayList<>();
		List<Holder> holders = new ArrayList<>();
		batch.completes.forEach((operation) -> holders.add(operation.holder));
		batch.releases.forEach((operation) -> holders.add(operation.holder));
		holders.addAll(batch.unlocks);
		batch.claims.forEach((operation) -> holders.add(operation.holder));
		for (Holder holder : holders) {
			if (this.guard.sharesLock(holder)) {
				return null;
			}
			locks.add(lockOf(holder));
		}
		Script script = new Script().add(HELD, this.dialect.heldLocks(info, locks));
		List<String> keys = new ArrayList<>();
		batch.completes.forEach((operation) -> keys.add(operation.holder.key));
		if (!keys.isEmpty()) {
			script.add(RECORDS, this.dialect.records(keys));
		}
		Answers answers = script.run(session.connection(), together(session), 0);
		Map<Object, Held> held = this.dialect.readHeldLocks(answers.one(HELD), locks);
		Map<String, StoredRecord> records = keys.isEmpty() ? Collections.emptyMap()
				: JdbcDialect.readRecords(answers.one(RECORDS), 0);
		return new Facts(held, records);
	}

	/** Gives spent store conditions back, frees locks; {@code false}: queued or ended. */
	private boolean settleLocks(LockSession session, Recovery recovery, Exception failure) {
		if (recovery.restore.isEmpty() && recovery.free.isEmpty()) {
			return true;
		}
		List<Sql> statements = new ArrayList<>(this.dialect.restore(recovery.restore));
		List<Object> locks = new ArrayList<>(recovery.free.size());
		recovery.free.forEach((holder) -> locks.add(lockOf(holder)));
		if (!locks.isEmpty()) {
			statements.add(this.dialect.unlock(locks));
		}
		try {
			if (!statements.isEmpty()) {
				SqlPipeline.run(session.connection(), together(session), 0, statements);
			}
			recovery.forget.forEach(this.guard::forget);
			return true;
		}
		catch (SQLException | RuntimeException ex) {
			failure.addSuppressed(ex);
			if (session.isDead(ex)) {
				lost(session, "failed while recovering from a failed batch", failure);
				// their locks died with the session
				recovery.forget.forEach(this.guard::forget);
				return false;
			}
			for (Holder holder : recovery.free) {
				holdUntilUnlocked(session, holder);
			}
			if (session.unlocks().failed(List.of())) {
				lost(session, "could not free the locks of a failed batch", failure);
			}
			return false;
		}
	}

	/** No facts on a live session: every lock the batch may hold stays until unlocked. */
	private void unknown(LockSession session, Batch batch, Exception failure) {
		List<Operation> all = batch.all();
		for (Operation operation : all) {
			if (this.guard.sharesLock(operation.holder)) {
				// a blind unlock could free another claim's count: end the session
				died(session, batch, failure, false, "closed to settle a failed batch whose locks collide");
				return;
			}
		}
		if (session.unlocks().failed(batch.unlocks)) {
			died(session, batch, failure, false, "could not run queued unlocks");
			return;
		}
		for (Operation claim : batch.claims) {
			// it may have taken its lock
			holdUntilUnlocked(session, claim.holder);
		}
		failAll(session, all, failure);
	}

	/** The session died: its claims are lost; the batch's may be queued once more. */
	private void died(LockSession session, Batch batch, Exception failure, boolean opened, String reason) {
		if (session.isOpen()) {
			lost(session, reason, failure);
		}
		for (Operation claim : batch.claims) {
			if (claim.isDone()) {
				continue;
			}
			if (!opened && claim.retries() == 0 && claim.isAwaited() && claim.holder.state() == State.CLAIMING) {
				// once more on a new connection (not if no longer CLAIMING: a lock taken
				// for it now could never be given back)
				claim.requeue();
				if (batch.shared) {
					this.pool.claims().add(claim);
				}
			}
			else {
				claim.fail(new LockingStoreException("Idempotency lock session failed", failure));
			}
		}
		for (Operation operation : batch.finishing()) {
			if (!operation.isDone()) {
				finished(operation, false);
			}
		}
		batch.unlocks.forEach(this.guard::forget);
	}

	/** After a bug or an {@link Error}: fails what runs; keys that may be held stay. */
	private void failUnsettled(LockSession session, Batch batch, Throwable failure) {
		if (session.isOpen() && batch.completes.stream().anyMatch((complete) -> !complete.isDone())) {
			// its store may have left a transaction open (see factsOrSettled)
			lost(session, "failed unexpectedly while storing", failure);
		}
		for (Operation operation : batch.all()) {
			if (operation.isDone() || operation.isQueued()) {
				continue;
			}
			if (operation.holder.lock() == null) {
				// never attached to a lock: nothing to unlock
				this.guard.forget(operation.holder);
			}
			else {
				holdUntilUnlocked(session, operation.holder);
			}
			operation.fail(failure);
		}
		putBack(session, batch.unlocks);
	}

	/** Queues again the unlocks of a batch that failed unexpectedly, unless they ran. */
	private void putBack(LockSession session, List<Holder> unlocks) {
		List<Holder> left = new ArrayList<>();
		for (Holder holder : unlocks) {
			if (holder.state() == State.GONE || session.unlocks().contains(holder)) {
				continue;
			}
			if (session.isOpen() && holder.generation() == session.generation()) {
				left.add(holder);
			}
			else {
				this.guard.forget(holder);
			}
		}
		if (!left.isEmpty() && session.unlocks().failed(left)) {
			lost(session, "could not run queued unlocks", null);
		}
	}

	/** Discards a session that died or whose locks can no longer be trusted. */
	void lost(LockSession session, String reason, @Nullable Throwable cause) {
		long generation = this.pool.discard(session);
		session.unlocks().clear(this.guard);
		long claims = this.guard.heldOn(session.index(), generation);
		if (claims > 0) {
			logger.warn("Idempotency " + session + " " + reason + "; the " + claims
					+ " claim(s) it held are lost (their responses will not be stored)", cause);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Idempotency " + session + " " + reason + "; it held no claims", cause);
		}
	}

	/** What one batch holds. */
	private static final class Batch {

		/** Whether its claims came from the shared queue (else their caller reruns). */
		final boolean shared;

		final List<Operation> completes = new ArrayList<>();

		final List<Operation> releases = new ArrayList<>();

		final List<Holder> unlocks = new ArrayList<>();

		final List<Operation> claims = new ArrayList<>();

		Batch(boolean shared) {
			this.shared = shared;
		}

		boolean isEmpty() {
			return size() == 0;
		}

		int size() {
			return this.completes.size() + this.releases.size() + this.unlocks.size() + this.claims.size();
		}

		void add(Operation operation) {
			switch (operation.kind) {
				case CLAIM -> this.claims.add(operation);
				case COMPLETE -> this.completes.add(operation);
				case RELEASE -> this.releases.add(operation);
			}
		}

		List<Operation> finishing() {
			List<Operation> finishing = new ArrayList<>(this.completes);
			finishing.addAll(this.releases);
			return finishing;
		}

		List<Operation> all() {
			List<Operation> all = finishing();
			all.addAll(this.claims);
			return all;
		}

	}

	/** What a failed batch left: what the session holds of its locks, the records. */
	private record Facts(Map<Object, Held> held, Map<String, StoredRecord> records) {

		Held of(Holder holder) {
			return this.held.get(lockOf(holder));
		}

	}

	/** What settling a failed batch decided. */
	private static final class Recovery {

		final List<Object> restore = new ArrayList<>();

		final List<Holder> free = new ArrayList<>();

		final List<Holder> forget = new ArrayList<>();

		final List<Operation> stored = new ArrayList<>();

		final List<Operation> failed = new ArrayList<>();

		void free(Holder holder, boolean thenForget) {
			this.free.add(holder);
			if (thenForget) {
				this.forget.add(holder);
			}
		}

	}

}
