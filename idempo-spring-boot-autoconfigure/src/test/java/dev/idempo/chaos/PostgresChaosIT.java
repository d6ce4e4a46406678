package dev.idempo.chaos;

/**
 * The chaos run on PostgreSQL: advisory locks on lock sessions for the non-transactional
 * endpoint, transaction-scoped locks for the transactional one, and a server whose
 * restarts keep records and rows but end every session.
 *
 * @author idempo
 */
class PostgresChaosIT extends ChaosRuns {

	@Override
	ChaosStore createStore() {
		return new PostgresChaosStore();
	}

}
