package dev.idempo.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

import org.jspecify.annotations.Nullable;

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

	/**
	 * Deflaters to reuse: a Deflater is costly to create (native zlib state), and one per
	 * thread would leave that native memory to the garbage collector with virtual threads
	 * (a thread per request); so a few are pooled and the rest ended at once.
	 */
	private static final Queue<Deflater> DEFLATERS = new ConcurrentLinkedQueue<>();

	private static final int MAX_POOLED_DEFLATERS = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());

	private static final AtomicInteger POOLED_DEFLATERS = new AtomicInteger();

	private ResponseEnvelope() {
	}

	/**
	 * Encodes a response.
	 * @param response the response
	 * @return the envelope bytes
	 */
	public static byte[] encode(CapturedResponse response) {
		byte[] body = response.body();
		return encode(response.status(), response.headers(), body, 0, body.length);
	}

	/**
	 * Encodes a response whose body is a slice of a larger array, so that a response held
	 * in a capture buffer is encoded without first copying its body out: the envelope is
	 * the only copy made (two when it is compressed).
	 * @param status the HTTP status code
	 * @param headers header names to their values
	 * @param body the array holding the body bytes
	 * @param offset where the body starts in {@code body}
	 * @param length the body length
	 * @return the envelope bytes
	 */
	public static byte[] encode(int status, Map<String, List<String>> headers, byte[] body, int offset, int length) {
		// encode every header string once, to size the envelope exactly
		List<byte[]> strings = new ArrayList<>();
		int payloadLength = 2 + 4 + 4 + length;
		for (Map.Entry<String, List<String>> header : headers.entrySet()) {
			payloadLength += 4 + add(strings, header.getKey()) + 4;
			for (String value : header.getValue()) {
				payloadLength += 4 + add(strings, value);
			}
		}
		byte[] envelope = new byte[HEADER_LENGTH + payloadLength];
		System.arraycopy(MAGIC, 0, envelope, 0, MAGIC.length);
		envelope[4] = VERSION;
		int position = HEADER_LENGTH;
		position = putShort(envelope, position, status);
		position = putInt(envelope, position, headers.size());
		int next = 0;
		for (Map.Entry<String, List<String>> header : headers.entrySet()) {
			position = putBytes(envelope, position, strings.get(next++));
			position = putInt(envelope, position, header.getValue().size());
			for (int i = 0; i < header.getValue().size(); i++) {
				position = putBytes(envelope, position, strings.get(next++));
			}
		}
		position = putInt(envelope, position, length);
		System.arraycopy(body, offset, envelope, position, length);
		if (payloadLength >= COMPRESSION_THRESHOLD) {
			byte[] deflated = deflate(envelope, payloadLength - payloadLength / 10);
			if (deflated != null) {
				return deflated;
			}
		}
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
		Payload payload = deflated ? new Payload(inflate(envelope, HEADER_LENGTH), 0)
				: new Payload(envelope, HEADER_LENGTH);
		try {
			return payload.read();
		}
		catch (IndexOutOfBoundsException ex) {
			throw new IllegalArgumentException("Corrupt idempo response envelope", ex);
		}
	}

	private static int add(List<byte[]> strings, String value) {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		strings.add(bytes);
		return bytes.length;
	}

	private static int putShort(byte[] target, int position, int value) {
		target[position] = (byte) (value >>> 8);
		target[position + 1] = (byte) value;
		return position + 2;
	}

	private static int putInt(byte[] target, int position, int value) {
		target[position] = (byte) (value >>> 24);
		target[position + 1] = (byte) (value >>> 16);
		target[position + 2] = (byte) (value >>> 8);
		target[position + 3] = (byte) value;
		return position + 4;
	}

	private static int putBytes(byte[] target, int position, byte[] bytes) {
		int start = putInt(target, position, bytes.length);
		System.arraycopy(bytes, 0, target, start, bytes.length);
		return start + bytes.length;
	}

	/**
	 * Compresses the payload of {@code envelope} straight into a compressed envelope, but
	 * only while the result stays within {@code limit} bytes.
	 * @return the compressed envelope, or {@code null} if compression does not save
	 * enough
	 */
	private static byte @Nullable [] deflate(byte[] envelope, int limit) {
		Deflater deflater = DEFLATERS.poll();
		if (deflater != null) {
			POOLED_DEFLATERS.decrementAndGet();
		}
		else {
			deflater = new Deflater(Deflater.BEST_SPEED);
		}
		try {
			deflater.setInput(envelope, HEADER_LENGTH, envelope.length - HEADER_LENGTH);
			deflater.finish();
			byte[] out = new byte[HEADER_LENGTH + limit];
			int position = HEADER_LENGTH;
			while (!deflater.finished()) {
				if (position == out.length) {
					return null;
				}
				position += deflater.deflate(out, position, out.length - position);
			}
			System.arraycopy(envelope, 0, out, 0, HEADER_LENGTH);
			out[5] = (byte) FLAG_DEFLATED;
			return (position == out.length) ? out : Arrays.copyOf(out, position);
		}
		finally {
			deflater.reset();
			if (POOLED_DEFLATERS.incrementAndGet() <= MAX_POOLED_DEFLATERS) {
				DEFLATERS.offer(deflater);
			}
			else {
				POOLED_DEFLATERS.decrementAndGet();
				deflater.end();
			}
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

	/** Reads a version 1 payload straight from the array that holds it. */
	private static final class Payload {

		private final byte[] data;

		private int position;

		Payload(byte[] data, int position) {
			this.data = data;
			this.position = position;
		}

		CapturedResponse read() {
			int status = readShort();
			int headerCount = readLength();
			Map<String, List<String>> headers = new LinkedHashMap<>();
			for (int i = 0; i < headerCount; i++) {
				String name = readString();
				int valueCount = readLength();
				List<String> values = new ArrayList<>(valueCount);
				for (int j = 0; j < valueCount; j++) {
					values.add(readString());
				}
				headers.put(name, values);
			}
			int bodyLength = readLength();
			byte[] body = Arrays.copyOfRange(this.data, this.position, this.position + bodyLength);
			this.position += bodyLength;
			return new CapturedResponse(status, headers, body);
		}

		private int readShort() {
			check(2);
			int value = ((this.data[this.position] & 0xff) << 8) | (this.data[this.position + 1] & 0xff);
			this.position += 2;
			return value;
		}

		/** A count or a byte length, which can never exceed what is left. */
		private int readLength() {
			check(4);
			int value = ((this.data[this.position] & 0xff) << 24) | ((this.data[this.position + 1] & 0xff) << 16)
					| ((this.data[this.position + 2] & 0xff) << 8) | (this.data[this.position + 3] & 0xff);
			this.position += 4;
			if (value < 0 || value > this.data.length - this.position) {
				throw new IllegalArgumentException("Corrupt idempo response envelope: invalid length " + value);
			}
			return value;
		}

		private String readString() {
			int length = readLength();
			String value = new String(this.data, this.position, length, StandardCharsets.UTF_8);
			this.position += length;
			return value;
		}

		private void check(int length) {
			if (this.data.length - this.position < length) {
				throw new IllegalArgumentException("Corrupt idempo response envelope: truncated");
			}
		}

	}

}
