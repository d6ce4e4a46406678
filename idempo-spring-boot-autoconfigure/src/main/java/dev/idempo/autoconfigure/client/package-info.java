/**
 * Auto-configuration for idempo: the calling side: RestClient, RestTemplate and
 * WebClient.
 */
@NullMarked
package dev.idempo.autoconfigure.client;

import org.jspecify.annotations.NullMarked;
