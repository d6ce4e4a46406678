package dev.idempo.web;

import org.jspecify.annotations.Nullable;

import dev.idempo.store.jdbc.JdbcLockingStore;

/**
 * A web-layer class that names a store implementation, which the layering forbids: the
 * proof that {@code ArchitectureTests} fails when someone writes one. Never used.
 *
 * @author idempo
 */
public final class WebImportingTheJdbcStore {

	@Nullable JdbcLockingStore store;

}
