/**
 * The check that a release bundle has what Maven Central requires, run by the release
 * profile after every published module has staged its artifacts. Not published.
 */
@NullMarked
package dev.idempo.release;

import org.jspecify.annotations.NullMarked;
