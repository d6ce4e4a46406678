package dev.idempo.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * Sends requests byte for byte, for header shapes a well-behaved client refuses to send
 * (repeated key headers, non-ASCII bytes, empty values).
 *
 * @author idempo
 */
final class RawHttp {

	private RawHttp() {
	}

	/**
	 * Sends {@code POST path} with the given raw header lines and an empty JSON body.
	 * @param port the server port
	 * @param path the request path
	 * @param headerLines raw header lines (ISO-8859-1 bytes), without line endings
	 * @return the whole response as ISO-8859-1 text
	 */
	static String post(int port, String path, String... headerLines) {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
			socket.setSoTimeout(30_000);
			StringBuilder request = new StringBuilder();
			request.append("POST ").append(path).append(" HTTP/1.1\r\n");
			request.append("Host: 127.0.0.1:").append(port).append("\r\n");
			request.append("Content-Type: application/json\r\n");
			request.append("Content-Length: 2\r\n");
			request.append("Connection: close\r\n");
			for (String line : headerLines) {
				request.append(line).append("\r\n");
			}
			request.append("\r\n{}");
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream response = new ByteArrayOutputStream();
			in.transferTo(response);
			return response.toString(StandardCharsets.ISO_8859_1);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static int status(String response) {
		return Integer.parseInt(response.substring(9, 12));
	}

}
