/**
 * Proofs of idempo's error handling of Spring JMS listener containers against a real
 * ActiveMQ Artemis broker.
 */
@NullMarked
package dev.idempo.jms;

import org.jspecify.annotations.NullMarked;
