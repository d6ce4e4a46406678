package dev.idempo.core;

import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * The idempotent execution (a protected web request or an {@code @Idempotent} method
 * call) that runs on the current thread, so that outbound calls made from it can derive
 * deterministic idempotency keys: the same execution re-run after a crash makes the same
 * calls in the same order and therefore sends the same keys downstream.
 * <p>
 * Bound by whoever runs the protected work, on the thread that runs it, for exactly as
 * long as it runs; a binding restores what was bound before it when closed, so nested
 * executions (an idempotent method called from an idempotent handler) each see their own.
 * Work handed to another thread (async handlers, executors) is not bound there.
 * <p>
 * Reactive work runs on no thread of its own: it carries its execution in the Reactor
 * context instead, under {@link #CONTEXT_KEY}, as one made by {@link #of(String)} and
 * shared by all the work of the execution (idempo's {@code WebClient} filter reads it
 * there, and falls back to the thread's).
 *
 * @author idempo
 */
public final class CurrentIdempotentCall {

	/**
	 * The key of the execution in a Reactor {@code Context}: reactive work that runs
	 * within an idempotent execution puts the execution ({@link #of(String)}) there, so
	 * that the outbound calls it makes derive their keys from it.
	 */
	public static final String CONTEXT_KEY = CurrentIdempotentCall.class.getName();

	private static final ThreadLocal<@Nullable CurrentIdempotentCall> CURRENT = new ThreadLocal<>();

	private final String identity;

	private final AtomicInteger calls = new AtomicInteger();

	private CurrentIdempotentCall(String identity) {
		this.identity = identity;
	}

	/**
	 * Binds an execution to the current thread until the returned binding is closed.
	 * @param identity what identifies the execution across instances and re-runs: its
	 * storage key (a digest of scope and key), never raw client input
	 * @return the binding; close it on the same thread when the work ends
	 */
	public static Binding bind(String identity) {
		return bind(new CurrentIdempotentCall(identity));
	}

	/**
	 * Binds an execution created with {@link #of} to the current thread (its outbound
	 * calls go on counting from where they are) until the returned binding is closed.
	 * @param call the execution
	 * @return the binding; close it on the same thread
	 */
	public static Binding bind(CurrentIdempotentCall call) {
		CurrentIdempotentCall previous = CURRENT.get();
		CURRENT.set(call);
		return new Binding(call, previous);
	}

	/**
	 * An execution bound to no thread, for work that carries it along by other means (a
	 * reactive pipeline, in its context under {@link #CONTEXT_KEY}). Its calls are
	 * counted from 0, so make one per run of the execution and share it between all of
	 * its work.
	 * @param identity what identifies the execution across instances and re-runs: its
	 * storage key (a digest of scope and key), never raw client input
	 * @return the execution
	 */
	public static CurrentIdempotentCall of(String identity) {
		return new CurrentIdempotentCall(identity);
	}

	/**
	 * The execution running on this thread.
	 * @return it, or {@code null} when no idempotent execution runs on this thread
	 */
	public static @Nullable CurrentIdempotentCall current() {
		return CURRENT.get();
	}

	/**
	 * What identifies this execution across instances and re-runs (a digest).
	 * @return the identity
	 */
	public String identity() {
		return this.identity;
	}

	/**
	 * The position of the next outbound call within this execution: 0 for the first, then
	 * 1, 2, ...
	 * @return the ordinal of the call being made
	 */
	public int nextCallOrdinal() {
		return this.calls.getAndIncrement();
	}

	/**
	 * A binding of an execution to a thread; closing it restores the previous one.
	 */
	public static final class Binding implements AutoCloseable {

		private final CurrentIdempotentCall call;

		private final @Nullable CurrentIdempotentCall previous;

		private Binding(CurrentIdempotentCall call, @Nullable CurrentIdempotentCall previous) {
			this.call = call;
			this.previous = previous;
		}

		@Override
		public void close() {
			if (CURRENT.get() == this.call) {
				if (this.previous != null) {
					CURRENT.set(this.previous);
				}
				else {
					CURRENT.remove();
				}
			}
		}

	}

}
