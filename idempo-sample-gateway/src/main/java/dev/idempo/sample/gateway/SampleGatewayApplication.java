package dev.idempo.sample.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Cloud Gateway with the idempo starter: its routes, in {@code application.yml},
 * protect a backend that knows nothing of idempotency keys. The gateway claims each key,
 * forwards the first request, stores the backend's response and replays it to retries;
 * with the {@code redis} profile, several gateways share the records.
 *
 * @author idempo
 */
@SpringBootApplication(proxyBeanMethods = false)
public class SampleGatewayApplication {

	/**
	 * Starts the gateway.
	 * @param args the command line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayApplication.class, args);
	}

}
