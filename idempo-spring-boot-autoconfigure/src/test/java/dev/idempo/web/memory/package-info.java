/**
 * Memory under many large concurrent bodies, in a JVM with a small heap.
 */
@NullMarked
package dev.idempo.web.memory;

import org.jspecify.annotations.NullMarked;
