package dev.idempo.webflux.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A WebFlux application run in its own JVM with a small heap (on Reactor Netty): an
 * idempotent handler and a functional endpoint, both reading large bodies as streams of
 * buffers that they release (so that only what idempo holds of them takes memory), and
 * its port written to {@code test.port-file}. Each handler reads its body only once every
 * request of its wave ({@code test.wave} requests) has reached its handler, so that all
 * of a wave's uploads are in flight at once, however fast the machine.
 */
@SpringBootApplication
public class SmallHeapWebFluxApplication {

	public static void main(String[] args) {
		SpringApplication.run(SmallHeapWebFluxApplication.class, args);
	}

	@Bean
	ApplicationListener<WebServerInitializedEvent> portFile(@Value("${test.port-file}") String portFile) {
		return (event) -> {
			try {
				Path target = Path.of(portFile);
				Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
				Files.writeString(temporary, Integer.toString(event.getWebServer().getPort()), StandardCharsets.UTF_8);
				Files.move(temporary, target);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		};
	}

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	RouterFunction<ServerResponse> functionalUpload(@Value("${test.wave}") int wave) {
		Wave functional = new Wave(wave);
		return RouterFunctions.route()
			.POST("/functional/upload",
					(request) -> functional.arrive()
						.then(drain(request.body(BodyExtractors.toDataBuffers())))
						.flatMap((bytes) -> ServerResponse.status(201).bodyValue(Map.of("bytes", bytes))))
			.build();
	}

	static Mono<Long> drain(Flux<DataBuffer> body) {
		return body.map((buffer) -> {
			long bytes = buffer.readableByteCount();
			DataBufferUtils.release(buffer);
			return bytes;
		}).reduce(0L, Long::sum);
	}

	@RestController
	static class UploadController {

		private final Wave wave;

		UploadController(@Value("${test.wave}") int wave) {
			this.wave = new Wave(wave);
		}

		@PostMapping("/upload")
		@Idempotent
		Mono<ResponseEntity<Map<String, Long>>> upload(ServerHttpRequest request) {
			return this.wave.arrive()
				.then(drain(request.getBody()))
				.map((bytes) -> ResponseEntity.status(201).body(Map.of("bytes", bytes)));
		}

	}

	/**
	 * Holds the handlers of a wave until all of its requests reached their handlers (at
	 * most a minute: a wave that never fills fails its requests), then the next wave
	 * starts.
	 */
	static final class Wave {

		private final int size;

		private int arrived;

		private CompletableFuture<Void> all = new CompletableFuture<>();

		Wave(int size) {
			this.size = size;
		}

		Mono<Void> arrive() {
			CompletableFuture<Void> wave;
			synchronized (this) {
				wave = this.all;
				if (++this.arrived == this.size) {
					this.arrived = 0;
					this.all = new CompletableFuture<>();
					wave.complete(null);
				}
			}
			return Mono.fromFuture(wave).timeout(Duration.ofMinutes(1));
		}

	}

}
