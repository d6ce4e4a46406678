/**
 * Real servers for tests: found, or started and stopped by the tests themselves.
 */
@NullMarked
package dev.idempo.testsupport;

import org.jspecify.annotations.NullMarked;
