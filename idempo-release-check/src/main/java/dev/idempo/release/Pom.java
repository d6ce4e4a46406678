package dev.idempo.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

import org.jspecify.annotations.Nullable;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * A POM of the bundle, as written: no inheritance, no interpolation.
 *
 * @param file the POM file
 * @param text the POM's text
 * @param project its {@code project} element
 * @author idempo
 */
record Pom(Path file, String text, Element project) {

	static Pom read(Path file) throws IOException {
		return new Pom(file, Files.readString(file), parse(file).getDocumentElement());
	}

	static Document parse(Path file) throws IOException {
		try {
			DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
			factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
			factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
			DocumentBuilder builder = factory.newDocumentBuilder();
			return builder.parse(file.toFile());
		}
		catch (ParserConfigurationException | SAXException ex) {
			throw new IOException("Cannot read " + file + ": " + ex.getMessage(), ex);
		}
	}

	@Nullable String get(String... path) {
		Element parent = (path.length > 1) ? child(this.project, List.of(path).subList(0, path.length - 1))
				: this.project;
		return text(parent, path[path.length - 1]);
	}

	String packaging() {
		String packaging = get("packaging");
		return (packaging != null) ? packaging : "jar";
	}

	/**
	 * The group, the POM's own or its parent's.
	 */
	@Nullable String groupId() {
		String groupId = get("groupId");
		return (groupId != null) ? groupId : get("parent", "groupId");
	}

	/**
	 * The version, the POM's own or its parent's.
	 */
	@Nullable String version() {
		String version = get("version");
		return (version != null) ? version : get("parent", "version");
	}

	List<Element> children(String container, String name) {
		Element parent = child(this.project, container);
		return (parent != null) ? elements(parent, name) : List.of();
	}

	List<Element> managedDependencies() {
		Element dependencies = child(this.project, "dependencyManagement", "dependencies");
		return (dependencies != null) ? elements(dependencies, "dependency") : List.of();
	}

	static @Nullable Element child(@Nullable Element element, String... names) {
		return child(element, List.of(names));
	}

	private static @Nullable Element child(@Nullable Element element, List<String> names) {
		Element current = element;
		for (String name : names) {
			if (current == null) {
				return null;
			}
			List<Element> matches = elements(current, name);
			current = matches.isEmpty() ? null : matches.get(0);
		}
		return current;
	}

	static List<Element> elements(Element parent, String name) {
		List<Element> elements = new ArrayList<>();
		for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element element && name.equals(element.getTagName())) {
				elements.add(element);
			}
		}
		return elements;
	}

	/**
	 * The trimmed text of a child element, {@code null} if there is none or it is blank.
	 */
	static @Nullable String text(@Nullable Element parent, String name) {
		Element child = child(parent, name);
		if (child == null || child.getTextContent().isBlank()) {
			return null;
		}
		return child.getTextContent().trim();
	}

}
