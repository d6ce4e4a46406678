package dev.idempo.autoconfigure.actuate;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The idempo Actuator endpoint.
 *
 * @author idempo
 */
@ConfigurationProperties("idempo.endpoint")
public class IdempotencyEndpointProperties {

	/**
	 * Whether the idempo Actuator endpoint shows the bodies of stored responses (they may
	 * hold personal data); by default only status and headers.
	 */
	private boolean showBody;

	public boolean isShowBody() {
		return this.showBody;
	}

	public void setShowBody(boolean showBody) {
		this.showBody = showBody;
	}

}
