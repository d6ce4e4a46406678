-- idempo: completed responses of the MySQL / MariaDB store. Idempotent: safe to run on every start.
-- Claims are named locks (GET_LOCK), never rows; a row is written only when a request completes,
-- with expires_at computed by the server in UTC. Rows past expires_at are treated as absent and
-- deleted in batches by the store.
CREATE TABLE IF NOT EXISTS idempo_responses (
	storage_key VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	fingerprint VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	response LONGBLOB NOT NULL,
	created_at DATETIME(6) NOT NULL,
	expires_at DATETIME(6) NOT NULL,
	PRIMARY KEY (storage_key),
	INDEX idempo_responses_expires_at_idx (expires_at)
) ENGINE = InnoDB;
