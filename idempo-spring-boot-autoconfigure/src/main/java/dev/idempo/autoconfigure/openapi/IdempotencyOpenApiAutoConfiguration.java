package dev.idempo.autoconfigure.openapi;

import org.springdoc.core.customizers.GlobalOperationCustomizer;

import dev.idempo.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempo.autoconfigure.IdempotencyProperties;
import dev.idempo.openapi.IdempotencyOperationCustomizer;
import dev.idempo.web.IdempotentHandlers;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Documents idempotent operations in springdoc-openapi's document, when springdoc is on
 * the class path: the key header, the replay header, idempo's problem responses and the
 * key policy ({@link IdempotencyOperationCustomizer}).
 *
 * @author idempo
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass(GlobalOperationCustomizer.class)
@ConditionalOnBean(IdempotentHandlers.class)
public final class IdempotencyOpenApiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyOperationCustomizer idempotencyOperationCustomizer(IdempotentHandlers handlers,
			IdempotencyProperties properties) {
		return new IdempotencyOperationCustomizer(handlers, properties.toSettings());
	}

}
