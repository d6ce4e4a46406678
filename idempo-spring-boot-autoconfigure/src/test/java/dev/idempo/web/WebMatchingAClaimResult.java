package dev.idempo.web;

import dev.idempo.store.ClaimResult;

/**
 * A web-layer class that matches on a store's claim result itself, as the web flows did
 * before the one flow: the proof that {@code ArchitectureTests} fails when an entry point
 * decides a claim outside {@code dev.idempo.flow}. Never used.
 *
 * @author idempo
 */
public final class WebMatchingAClaimResult {

	static boolean replays(ClaimResult claim) {
		return claim instanceof ClaimResult.Completed;
	}

}
