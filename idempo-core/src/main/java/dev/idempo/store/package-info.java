/**
 * The {@link dev.idempo.store.LockingStore} SPI that claims keys and keeps completed
 * responses.
 */
@NullMarked
package dev.idempo.store;

import org.jspecify.annotations.NullMarked;
