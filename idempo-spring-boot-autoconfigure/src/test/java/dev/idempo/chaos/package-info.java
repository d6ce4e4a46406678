/**
 * The chaos test: several instances of an application in separate JVMs share a store that
 * the test restarts, while a retrying client sends duplicates and the test kills
 * instances with SIGKILL; a checker then reads the durable record of every handler
 * execution and every answer the client saw, and fails on what the contract does not
 * allow. Run by the Maven profile {@code chaos} (Failsafe), not by the default build.
 */
@NullMarked
package dev.idempo.chaos;

import org.jspecify.annotations.NullMarked;
