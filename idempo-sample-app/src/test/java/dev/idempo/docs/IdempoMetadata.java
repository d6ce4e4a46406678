package dev.idempo.docs;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * idempo's configuration metadata as the jar ships it: the generated
 * {@code spring-configuration-metadata.json} and
 * {@code additional-spring-configuration-metadata.json}, read from the class path.
 */
public final class IdempoMetadata {

	private static final String PREFIX = "idempo.";

	private static final String[] METADATA = { "META-INF/spring-configuration-metadata.json",
			"META-INF/additional-spring-configuration-metadata.json" };

	private IdempoMetadata() {
	}

	/**
	 * idempo's properties ({@code idempo.*}), by name, with their defaults as text.
	 * @return the properties; a default is {@code ""} when there is none
	 * @throws IOException if a metadata file cannot be read
	 */
	public static Map<String, String> properties() throws IOException {
		JsonMapper json = JsonMapper.builder().build();
		Map<String, String> properties = new TreeMap<>();
		for (String resource : METADATA) {
			for (URL url : Collections.list(IdempoMetadata.class.getClassLoader().getResources(resource))) {
				try (InputStream in = url.openStream()) {
					for (JsonNode property : json.readTree(in).path("properties")) {
						String name = property.path("name").asString();
						if (name.startsWith(PREFIX)) {
							properties.merge(name, defaultValue(property.path("defaultValue")),
									(a, b) -> a.isEmpty() ? b : a);
						}
					}
				}
			}
		}
		return properties;
	}

	private static String defaultValue(JsonNode value) {
		if (value.isMissingNode() || value.isNull()) {
			return "";
		}
		if (value.isArray()) {
			List<String> items = new ArrayList<>();
			value.forEach((item) -> items.add(item.asString()));
			return String.join(",", items);
		}
		return value.asString();
	}

}
