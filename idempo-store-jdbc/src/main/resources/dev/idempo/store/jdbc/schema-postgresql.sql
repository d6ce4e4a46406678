-- idempo: completed responses of the PostgreSQL store. Idempotent: safe to run on every start.
-- Claims are advisory locks (pg_try_advisory_lock), never rows; a row is written only when a
-- request completes, with expires_at computed by the server. Rows past expires_at are treated
-- as absent and deleted in batches by the store.
CREATE TABLE IF NOT EXISTS idempo_responses (
	storage_key VARCHAR(128) NOT NULL,
	fingerprint VARCHAR(128) NOT NULL,
	response BYTEA NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (storage_key)
);

CREATE INDEX IF NOT EXISTS idempo_responses_expires_at_idx ON idempo_responses (expires_at);
