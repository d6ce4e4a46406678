/**
 * Proofs of {@code @Idempotent} on Kafka listeners against a real broker (Spring Kafka's
 * embedded KRaft broker) and real databases: duplicates sent by the producer, a consumer
 * killed between the commit of its rows and the commit of its offsets, and listeners that
 * fail and are redelivered, counting rows in the database.
 */
@NullMarked
package dev.idempo.kafka;

import org.jspecify.annotations.NullMarked;
