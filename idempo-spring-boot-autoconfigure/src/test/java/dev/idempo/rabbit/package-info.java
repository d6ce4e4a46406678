/**
 * Proofs of idempo's error handling of Spring AMQP listener containers against a real
 * RabbitMQ server.
 */
@NullMarked
package dev.idempo.rabbit;

import org.jspecify.annotations.NullMarked;
