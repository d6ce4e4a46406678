/**
 * Auto-configuration for idempo: Kafka, RabbitMQ and JMS listener containers.
 */
@NullMarked
package dev.idempo.autoconfigure.listener;

import org.jspecify.annotations.NullMarked;
