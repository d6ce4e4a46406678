/**
 * A {@link dev.idempo.store.LockingStore} that lives in one JVM.
 */
@NullMarked
package dev.idempo.store.memory;

import org.jspecify.annotations.NullMarked;
