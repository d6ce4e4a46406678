package dev.idempo.web.memory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.idempo.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * An application run in its own JVM with a small heap: an idempotent handler and a
 * functional endpoint, both reading large bodies as streams (so that only what idempo
 * holds of them takes heap), and its port written to {@code test.port-file}.
 */
@SpringBootApplication
public class SmallHeapApplication {

	public static void main(String[] args) {
		SpringApplication.run(SmallHeapApplication.class, args);
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
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	RouterFunction<ServerResponse> functionalUpload() {
		return RouterFunctions.route()
			.POST("/functional/upload",
					(request) -> ServerResponse.status(201)
						.body(Map.of("bytes", drain(request.servletRequest().getInputStream()))))
			.build();
	}

	static long drain(InputStream in) throws IOException {
		byte[] chunk = new byte[64 * 1024];
		long total = 0;
		int read;
		while ((read = in.read(chunk)) >= 0) {
			total += read;
		}
		return total;
	}

	@RestController
	static class UploadController {

		@PostMapping("/upload")
		@Idempotent
		ResponseEntity<Map<String, Long>> upload(HttpServletRequest request) throws IOException {
			return ResponseEntity.status(201).body(Map.of("bytes", drain(request.getInputStream())));
		}

		/**
		 * Writes {@code size} bytes of {@link #pattern(int)} in small chunks, so that
		 * only what idempo holds of the response takes heap.
		 */
		@PostMapping("/download")
		@Idempotent
		void download(@RequestParam int size, HttpServletResponse response) throws IOException {
			response.setContentType("application/octet-stream");
			byte[] chunk = new byte[64 * 1024];
			OutputStream out = response.getOutputStream();
			for (int written = 0; written < size; written += chunk.length) {
				int length = Math.min(chunk.length, size - written);
				for (int i = 0; i < length; i++) {
					chunk[i] = pattern(written + i);
				}
				out.write(chunk, 0, length);
			}
		}

	}

	/**
	 * The byte at {@code position} of every download.
	 * @param position the position
	 * @return the byte
	 */
	static byte pattern(int position) {
		return (byte) (position % 251);

	}

}
