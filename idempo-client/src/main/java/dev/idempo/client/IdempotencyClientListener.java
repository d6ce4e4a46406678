package dev.idempo.client;

/**
 * Told of each attempt and each retry of {@link IdempotencyClientInterceptor}, for
 * metrics. Called on the thread that makes the call, synchronously; an exception thrown
 * here is logged and never reaches the call.
 *
 * @author idempo
 */
public interface IdempotencyClientListener {

	/** A listener that does nothing. */
	IdempotencyClientListener NONE = new IdempotencyClientListener() {
	};

	/**
	 * An attempt has ended: an answer arrived, or it failed with an I/O exception.
	 * @param method the request method, {@code OTHER} for a non-standard one
	 * @param outcome what the attempt got
	 */
	default void onAttempt(String method, AttemptOutcome outcome) {
	}

	/**
	 * An attempt's outcome is retried; called before the wait.
	 * @param method the request method, {@code OTHER} for a non-standard one
	 * @param reason why
	 */
	default void onRetry(String method, RetryReason reason) {
	}

	/**
	 * What an attempt got.
	 */
	enum AttemptOutcome {

		/** An answer with a 1xx status. */
		INFORMATIONAL("1xx"),

		/** An answer with a 2xx status. */
		SUCCESS("2xx"),

		/** An answer with a 3xx status. */
		REDIRECTION("3xx"),

		/** An answer with a 4xx status. */
		CLIENT_ERROR("4xx"),

		/** An answer with a 5xx status. */
		SERVER_ERROR("5xx"),

		/** No answer: the attempt failed with an I/O exception. */
		IO_ERROR("io-error");

		private final String tag;

		AttemptOutcome(String tag) {
			this.tag = tag;
		}

		/**
		 * The value of the {@code outcome} tag of the attempt meter.
		 * @return the tag value
		 */
		public String tag() {
			return this.tag;
		}

		static AttemptOutcome of(int status) {
			if (status < 200) {
				return INFORMATIONAL;
			}
			if (status < 300) {
				return SUCCESS;
			}
			if (status < 400) {
				return REDIRECTION;
			}
			return (status < 500) ? CLIENT_ERROR : SERVER_ERROR;
		}

	}

}
