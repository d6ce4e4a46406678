/**
 * Applications whose store connections are cut, black-holed and slowed down by a proxy.
 */
@NullMarked
package dev.idempo.web.faults;

import org.jspecify.annotations.NullMarked;
