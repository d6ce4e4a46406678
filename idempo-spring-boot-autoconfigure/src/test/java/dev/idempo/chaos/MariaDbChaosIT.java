package dev.idempo.chaos;

/**
 * The chaos run on MariaDB (the {@code mysql} store, MariaDB driver): {@code GET_LOCK} on
 * lock sessions for the non-transactional endpoint and on the transaction's connection
 * for the transactional one, and a server whose restarts keep records and rows but end
 * every session.
 *
 * @author idempo
 */
class MariaDbChaosIT extends ChaosRuns {

	@Override
	ChaosStore createStore() {
		return new MariaDbChaosStore();
	}

}
