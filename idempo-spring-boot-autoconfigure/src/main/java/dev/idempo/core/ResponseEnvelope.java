package dev.idempo.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * The stored format of a response: a versioned binary envelope, no Java serialization.
 *
 * <pre>
 * offset 0  4 bytes  magic "IDMP"
 * offset 4  1 byte   format version (1)
 * offset 5  1 byte   flags: bit 0 set = payload is DEFLATE-compressed
 * offset 6  ...      payload
 *
 * payload (version 1), big-endian:
 *   u16 status
 *   i32 header count, then per header: string name, i32 value count, string values
 *   i32 body length, body bytes
 * string = i32 byte length + UTF-8 bytes
 * </pre>
 *
 * The payload is compressed only when it is at least {@value #COMPRESSION_THRESHOLD}
 * bytes and compression saves at least a tenth. Readers accept every version up to their
 * own and reject newer ones, so a record written by an older starter stays readable.
 *
 * @author idempo
 */
public final class ResponseEnvelope {

	/** The format version this class writes. */
	public static final int VERSION = 1;

	static final int COMPRESSION_THRESHOLD = 4096;

	private static final byte[] MAGIC = { 'I', 'D', 'M', 'P' };

	private static final int HEADER_LENGTH = 6;

	private static final int FLAG_DEFLATED = 1;

	/** Guards against corrupt or hostile records inflating without bound. */
	private static final int MAX_PAYLOAD = 256 * 1024 * 1024;

	private static final ThreadLocal<Deflater> DEFLATERS = ThreadLocal
		.withInitial(() -> new Deflater(Deflater.BEST_SPEED));

	private ResponseEnvelope() {
	}

	/**
	 * Encodes a response.
	 * @param response the response
	 * @return the envelope bytes
	 */
	public static byte[] encode(CapturedResponse response) {
		byte[] payload = payload(response);
		byte[] compressed = (payload.length >= COMPRESSION_THRESHOLD) ? deflate(payload) : null;
		boolean deflated = compressed != null && compressed.length <= payload.length - payload.length / 10;
		byte[] body = deflated ? compressed : payload;
		byte[] envelope = new byte[HEADER_LENGTH + body.length];
		System.arraycopy(MAGIC, 0, envelope, 0, MAGIC.length);
		envelope[4] = VERSION;
		envelope[5] = (byte) (deflated ? FLAG_DEFLATED : 0);
		System.arraycopy(body, 0, envelope, HEADER_LENGTH, body.length);
		return envelope;
	}

	/**
	 * Decodes an envelope written by this or an earlier version.
	 * @param envelope the envelope bytes
	 * @return the response
	 * @throws IllegalArgumentException if the bytes are not an envelope, are corrupt, or
	 * were written by a newer version
	 */
	public static CapturedResponse decode(byte[] envelope) {
		if (envelope.length < HEADER_LENGTH || envelope[0] != MAGIC[0] || envelope[1] != MAGIC[1]
				|| envelope[2] != MAGIC[2] || envelope[3] != MAGIC[3]) {
			throw new IllegalArgumentException("Not an idempo response envelope");
		}
		int version = envelope[4];
		if (version < 1 || version > VERSION) {
			throw new IllegalArgumentException("Unsupported idempo response envelope version " + version
					+ " (this version reads up to " + VERSION + ")");
		}
		boolean deflated = (envelope[5] & FLAG_DEFLATED) != 0;
		InputStream payload = new ByteArrayInputStream(envelope, HEADER_LENGTH, envelope.length - HEADER_LENGTH);
		if (deflated) {
			payload = new ByteArrayInputStream(inflate(envelope, HEADER_LENGTH));
		}
		try {
			return readPayload(new DataInputStream(payload));
		}
		catch (IOException ex) {
			throw new IllegalArgumentException("Corrupt idempo response envelope", ex);
		}
	}

	private static byte[] payload(CapturedResponse response) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(response.body().length + 256);
		try (DataOutputStream out = new DataOutputStream(bytes)) {
			out.writeShort(response.status());
			out.writeInt(response.headers().size());
			for (Map.Entry<String, List<String>> header : response.headers().entrySet()) {
				writeString(out, header.getKey());
				out.writeInt(header.getValue().size());
				for (String value : header.getValue()) {
					writeString(out, value);
				}
			}
			out.writeInt(response.body().length);
			out.write(response.body());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return bytes.toByteArray();
	}

	private static CapturedResponse readPayload(DataInputStream in) throws IOException {
		int status = in.readUnsignedShort();
		int headerCount = in.readInt();
		checkLength(headerCount, in);
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (int i = 0; i < headerCount; i++) {
			String name = readString(in);
			int valueCount = in.readInt();
			checkLength(valueCount, in);
			List<String> values = new ArrayList<>(valueCount);
			for (int j = 0; j < valueCount; j++) {
				values.add(readString(in));
			}
			headers.put(name, values);
		}
		int bodyLength = in.readInt();
		checkLength(bodyLength, in);
		byte[] body = in.readNBytes(bodyLength);
		if (body.length != bodyLength) {
			throw new IOException("Truncated body");
		}
		return new CapturedResponse(status, headers, body);
	}

	private static void writeString(DataOutputStream out, String value) throws IOException {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		out.writeInt(bytes.length);
		out.write(bytes);
	}

	private static String readString(DataInputStream in) throws IOException {
		int length = in.readInt();
		checkLength(length, in);
		byte[] bytes = in.readNBytes(length);
		if (bytes.length != length) {
			throw new IOException("Truncated string");
		}
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static void checkLength(int length, DataInputStream in) throws IOException {
		if (length < 0 || length > in.available()) {
			throw new IOException("Invalid length " + length);
		}
	}

	private static byte[] deflate(byte[] payload) {
		// a Deflater is costly to create (native zlib state): keep one per thread
		Deflater deflater = DEFLATERS.get();
		deflater.reset();
		try {
			deflater.setInput(payload);
			deflater.finish();
			ByteArrayOutputStream out = new ByteArrayOutputStream(payload.length / 2 + 64);
			byte[] buffer = new byte[8192];
			while (!deflater.finished()) {
				out.write(buffer, 0, deflater.deflate(buffer));
			}
			return out.toByteArray();
		}
		finally {
			deflater.reset();
		}
	}

	private static byte[] inflate(byte[] envelope, int offset) {
		Inflater inflater = new Inflater();
		try {
			inflater.setInput(envelope, offset, envelope.length - offset);
			ByteArrayOutputStream out = new ByteArrayOutputStream(envelope.length * 4);
			byte[] buffer = new byte[8192];
			while (!inflater.finished()) {
				int count = inflater.inflate(buffer);
				if (count == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
					throw new IllegalArgumentException("Truncated compressed idempo response envelope");
				}
				out.write(buffer, 0, count);
				if (out.size() > MAX_PAYLOAD) {
					throw new IllegalArgumentException("Compressed idempo response envelope is too large");
				}
			}
			return out.toByteArray();
		}
		catch (DataFormatException ex) {
			throw new IllegalArgumentException("Corrupt compressed idempo response envelope", ex);
		}
		finally {
			inflater.end();
		}
	}

}
