package dev.idempo.web.hostile;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import dev.idempo.web.hostile.HostileCase.Abandoned;
import dev.idempo.web.hostile.HostileCase.AbandonedAfterHandler;
import dev.idempo.web.hostile.HostileCase.Executes;
import dev.idempo.web.hostile.HostileCase.Expected;
import dev.idempo.web.hostile.HostileCase.Problem;
import dev.idempo.web.hostile.HostileCase.Refused;
import dev.idempo.web.hostile.HostileCase.Refuser;
import dev.idempo.web.hostile.HostileCase.RejectedBeforeHandler;
import dev.idempo.web.hostile.HostileCase.Replays;
import dev.idempo.web.hostile.RawExchange.Ending;

/**
 * The hostile cases, in the order they run. Key cases go to {@code POST /t/required} (a
 * key is required there, so a key the server fails to see is a {@code 400 missing-key},
 * never an unprotected run) with the body {@code {}}, like the {@linkplain #VICTIMS
 * victims}; body cases go to {@code /t/required} (framing and size), {@code /t/orders}
 * (whose {@code @RequestBody} refuses what is not an order) or {@code /t/form}.
 * <p>
 * Keys that a careless parser could turn into a victim (by dropping a control character,
 * replacing a byte with {@code ?} or a space, cutting at a quote or a semicolon) are
 * built around the victims, so that such a bug would replay or overwrite a victim instead
 * of going unnoticed. What Tomcat, Spring Security's firewall and Spring MVC do with a
 * request before idempo sees it is asserted as observed with Tomcat 11 and Spring
 * Security 7; every such answer is a 4xx too.
 * <p>
 * Left out on purpose: a multipart body without a boundary or without its closing
 * delimiter, which Spring MVC's multipart resolver answers with a 500 before any handler
 * or interceptor runs, with or without a key and on unannotated handlers alike; and
 * {@code Transfer-Encoding} values Tomcat does not implement, which it answers with 501.
 *
 * @author idempo
 */
final class HostileCases {

	/** Requires a key: a key the server does not see is a 400, never a run. */
	static final String REQUIRED = "/t/required";

	/** Reads an {@code OrderRequest} with {@code @RequestBody}. */
	static final String ORDERS = "/t/orders";

	/** Reads the form parameter {@code amount}. */
	static final String FORM = "/t/form";

	/**
	 * Stored before the hostile cases, each by {@code POST /t/required} with {@code {}},
	 * and replayed byte for byte after them.
	 */
	static final List<String> VICTIMS = List.of("abc", "abcdef", "abc def", "abc?def", "abc;a=1", "ab");

	private static final String FORM_TYPE = "application/x-www-form-urlencoded";

	private HostileCases() {
	}

	/**
	 * Every case, in order; later cases may replay keys that earlier ones stored.
	 * @return the cases
	 */
	static List<HostileCase> all() {
		List<HostileCase> cases = new ArrayList<>();
		controlCharacters(cases);
		nonAscii(cases);
		lengths(cases);
		emptyAndWhitespace(cases);
		severalHeaders(cases);
		headerNames(cases);
		structuredFields(cases);
		redisAndLua(cases);
		sql(cases);
		sameKeyWrittenDifferently(cases);
		callers(cases);
		malformedRequests(cases);
		bodyFraming(cases);
		incompleteBodies(cases);
		bodiesTheHandlerRefuses(cases);
		forms(cases);
		return cases;
	}

	private static void controlCharacters(List<HostileCase> cases) {
		// Tomcat refuses CTLs other than HTAB in a field value (RFC 9110, 5.5)
		for (int octet = 0; octet < 0x20; octet++) {
			if (octet != '\t' && octet != '\n' && octet != '\r') {
				cases.add(key(String.format("control 0x%02X between abc and def", octet), Refused.container(),
						RawRequest.post(REQUIRED).key("abc", octet, "def")));
			}
		}
		cases.add(key("NUL ending the key", Refused.container(), RawRequest.post(REQUIRED).key("abc", 0x00)));
		cases.add(key("NUL starting the key", Refused.container(), RawRequest.post(REQUIRED).key(0x00, "abc")));
		cases.add(key("DEL 0x7F between abc and def", Refused.container(),
				RawRequest.post(REQUIRED).key("abc", 0x7F, "def")));
		cases.add(key("DEL 0x7F ending the key", Refused.container(), RawRequest.post(REQUIRED).key("abc", 0x7F)));
		cases.add(key("CR alone between abc and def", Refused.container(),
				RawRequest.post(REQUIRED).key("abc", '\r', "def")));
		cases.add(key("CR alone ending the key", Refused.container(), RawRequest.post(REQUIRED).key("abc", '\r')));
		cases.add(key("LF alone between abc and def", Refused.container(),
				RawRequest.post(REQUIRED).key("abc", '\n', "def")));
		// HTAB is allowed in field values: idempo refuses it inside a key
		cases.add(key("TAB between abc and def", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc", '\t', "def")));
		cases.add(key("TAB inside a quoted key", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc", '\t', "def\"")));
		cases.add(key("TAB ending a quoted key inside the quotes", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc", '\t', "\"")));
	}

	private static void nonAscii(List<HostileCase> cases) {
		cases.add(key("Latin-1 e-acute 0xE9", Problem.invalidKey(), RawRequest.post(REQUIRED).key("abc", 0xE9, "def")));
		cases.add(key("Latin-1 y-diaeresis 0xFF", Problem.invalidKey(), RawRequest.post(REQUIRED).key("abc", 0xFF)));
		cases.add(key("no-break space 0xA0 ending the key (not trimmed)", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc", 0xA0)));
		cases.add(key("no-break space 0xA0 starting the key (not trimmed)", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key(0xA0, "abc")));
		cases.add(key("C1 control 0x80", Refused.firewall(), RawRequest.post(REQUIRED).key("abc", 0x80, "def")));
		cases.add(key("C1 next line 0x85", Refused.firewall(), RawRequest.post(REQUIRED).key("abc", 0x85, "def")));
		cases
			.add(key("C1 control 0x9F ending the key", Refused.firewall(), RawRequest.post(REQUIRED).key("abc", 0x9F)));
		cases.add(key("UTF-8 e-acute C3 A9", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc", 0xC3, 0xA9, "def")));
		cases.add(key("UTF-8 euro sign E2 82 AC", Refused.firewall(),
				RawRequest.post(REQUIRED).key("abc", 0xE2, 0x82, 0xAC)));
		cases.add(key("UTF-8 emoji F0 9F 98 80", Refused.firewall(),
				RawRequest.post(REQUIRED).key("abc", 0xF0, 0x9F, 0x98, 0x80)));
		cases.add(key("UTF-8 fullwidth abc (abc after NFKC)", Refused.firewall(),
				RawRequest.post(REQUIRED).key(0xEF, 0xBD, 0x81, 0xEF, 0xBD, 0x82, 0xEF, 0xBD, 0x83)));
		cases.add(key("UTF-8 byte order mark before abc", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key(0xEF, 0xBB, 0xBF, "abc")));
		cases.add(key("invalid UTF-8: C3 followed by ASCII", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc", 0xC3, "(def")));
		cases.add(key("invalid UTF-8: overlong slash C0 AF", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc", 0xC0, 0xAF)));
		cases.add(key("invalid UTF-8: lone continuation bytes 80 BF", Refused.firewall(),
				RawRequest.post(REQUIRED).key("abc", 0x80, 0xBF)));
		cases.add(key("invalid UTF-8: encoded surrogate ED A0 80", Refused.firewall(),
				RawRequest.post(REQUIRED).key("abc", 0xED, 0xA0, 0x80)));
		cases.add(key("Latin-1 inside a quoted key", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc", 0xE9, "def\"")));
		cases.add(key("Latin-1 in a parameter of a quoted key", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";x=\"", 0xE9, "\"")));
	}

	private static void lengths(List<HostileCase> cases) {
		cases.add(key("bare key of 255 characters (the maximum)", new Executes("k".repeat(255)),
				RawRequest.post(REQUIRED).key("k".repeat(255))));
		cases.add(key("bare key of 256 characters", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("k".repeat(256))));
		cases.add(key("quoted key of 255 characters", new Executes("q".repeat(255)),
				RawRequest.post(REQUIRED).key("\"" + "q".repeat(255) + "\"")));
		cases.add(key("quoted key of 256 characters", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"" + "q".repeat(256) + "\"")));
		cases.add(key("255 escaped backslashes (512 characters on the wire)", new Executes("\\".repeat(255)),
				RawRequest.post(REQUIRED).key("\"" + "\\\\".repeat(255) + "\"")));
		cases.add(key("256 escaped backslashes", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"" + "\\\\".repeat(256) + "\"")));
		cases.add(key("254 characters padded with 200 spaces", new Executes("p".repeat(254)),
				RawRequest.post(REQUIRED).key(" ".repeat(100) + "p".repeat(254) + " ".repeat(100))));
		cases.add(key("key of 1000 characters", Problem.invalidKey(), RawRequest.post(REQUIRED).key("l".repeat(1000))));
		cases.add(key("key of 7000 characters (within the header limit)", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("l".repeat(7000))));
		cases.add(key("key of 9000 characters (over the header limit)", Refused.container(),
				RawRequest.post(REQUIRED).key("l".repeat(9000))));
		cases.add(
				key("key of 70000 characters", Refused.container(), RawRequest.post(REQUIRED).key("l".repeat(70_000))));
		cases.add(key("key of one character", new Executes("1"), RawRequest.post(REQUIRED).key("1")));
	}

	private static void emptyAndWhitespace(List<HostileCase> cases) {
		cases.add(key("empty key", Problem.invalidKey(), RawRequest.post(REQUIRED).headerLine("Idempotency-Key:")));
		cases.add(key("key of spaces only", Problem.invalidKey(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key:      ")));
		cases.add(key("key of tabs only", Problem.invalidKey(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key:", '\t', '\t')));
		cases.add(key("empty quoted key", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"\"")));
		cases.add(key("empty quoted key with a parameter", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"\";a=1")));
		cases.add(key("quoted single space (a valid key)", new Executes(" "), RawRequest.post(REQUIRED).key("\" \"")));
		cases.add(key("quoted key with leading spaces (kept)", new Executes("   abc"),
				RawRequest.post(REQUIRED).key("\"   abc\"")));
		cases.add(key("quoted key with a trailing space (kept)", new Executes("abc "),
				RawRequest.post(REQUIRED).key("\"abc \"")));
	}

	private static void severalHeaders(List<HostileCase> cases) {
		cases.add(key("two key headers, same value", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc").key("abc")));
		cases.add(key("two key headers, different values", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc").key("xyz")));
		cases.add(key("key header and alias header", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc").header("X-Idempotency-Key", "abc")));
		cases.add(key("empty alias header", Problem.invalidKey(),
				RawRequest.post(REQUIRED).headerLine("X-Idempotency-Key:")));
		cases.add(key("two alias headers", Problem.invalidKey(),
				RawRequest.post(REQUIRED).header("X-Idempotency-Key", "abc").header("X-Idempotency-Key", "abc")));
		cases.add(key("two key headers differing in name case", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc").header("idempotency-key", "abc")));
		cases.add(key("an empty key header before a valid one", Problem.invalidKey(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key:").key("abc")));
		cases.add(key("a structured-field list of two keys", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\", \"xyz\"")));
		// intermediaries may join repeated lines with commas: a bare abc, xyz is two keys
		cases.add(key("a comma in a bare key (two keys joined, as two lines are)", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc, xyz")));
		cases.add(key("a comma without a space in a bare key", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc,xyz")));
		cases.add(key("a comma in a quoted key (one key)", new Executes("abc, xyz"),
				RawRequest.post(REQUIRED).key("\"abc, xyz\"")));
		// Tomcat unfolds obs-fold, keeping the SP or HTAB that starts the continuation
		// line (RFC 9112, 5.2, lets a server replace it with SP instead of refusing it)
		cases.add(key("obs-fold: abc continued by SP def is the key abc def", new Replays("abc def"),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key: abc").headerLine(" def")));
		cases.add(key("obs-fold: abc continued by HTAB def holds a TAB", Problem.invalidKey(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key: abc").headerLine('\t', "def")));
		cases.add(key("obs-fold: empty first line, abc on the second, is abc", new Replays("abc"),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key:").headerLine(" abc")));
	}

	private static void headerNames(List<HostileCase> cases) {
		cases.add(key("header name in lower case", new Replays("abc"),
				RawRequest.post(REQUIRED).header("idempotency-key", "abc")));
		cases.add(key("header name in upper case", new Replays("abc"),
				RawRequest.post(REQUIRED).header("IDEMPOTENCY-KEY", "abc")));
		cases.add(key("alias header name in mixed case", new Replays("abc"),
				RawRequest.post(REQUIRED).header("x-IDEMPOTENCY-key", "abc")));
		cases.add(key("no space after the colon", new Replays("abc"),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key:abc")));
		cases.add(key("space before the colon", Refused.container(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key : abc")));
		cases.add(key("tab before the colon", Refused.container(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key", '\t', ": abc")));
		cases.add(key("underscore instead of hyphen (another header)", Problem.missingKey(),
				RawRequest.post(REQUIRED).header("Idempotency_Key", "abc")));
		cases.add(key("trailing hyphen in the name (another header)", Problem.missingKey(),
				RawRequest.post(REQUIRED).header("Idempotency-Key-", "abc")));
		cases.add(key("soft hyphen 0xAD in the name", Refused.container(),
				RawRequest.post(REQUIRED).headerLine("Idempotency", 0xAD, "Key: abc")));
		cases.add(key("NUL in the header name", Refused.container(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key", 0x00, ": abc")));
		cases.add(key("header line without a colon", Refused.container(),
				RawRequest.post(REQUIRED).headerLine("Idempotency-Key abc")));
		RawRequest manyHeaders = RawRequest.post(REQUIRED).key("abc");
		for (int i = 0; i < 100; i++) {
			manyHeaders.header("X-Filler-" + i, "x");
		}
		cases.add(key("101 headers (over Tomcat's limit)", Refused.container(), manyHeaders));
	}

	private static void structuredFields(List<HostileCase> cases) {
		cases.add(key("sf: unterminated quote", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"abc")));
		cases.add(key("sf: escape at the end", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"abc\\")));
		cases.add(key("sf: escaped closing quote, unterminated", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\\\"")));
		cases.add(key("sf: escape of a letter", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"ab\\c\"")));
		cases.add(key("sf: escaped quote inside (key ab\"c)", new Executes("ab\"c"),
				RawRequest.post(REQUIRED).key("\"ab\\\"c\"")));
		cases.add(key("sf: escaped backslash inside (key ab\\c)", new Executes("ab\\c"),
				RawRequest.post(REQUIRED).key("\"ab\\\\c\"")));
		cases.add(key("sf: quote inside a bare key", Problem.invalidKey(), RawRequest.post(REQUIRED).key("ab\"c")));
		cases.add(key("sf: quote ending a bare key", Problem.invalidKey(), RawRequest.post(REQUIRED).key("abc\"")));
		cases.add(key("sf: text after the closing quote", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\"def")));
		cases.add(key("sf: two strings", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"abc\" \"def\"")));
		cases.add(key("sf: space before a parameter", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\" ;a=1")));
		cases.add(key("sf: empty parameter", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"abc\";")));
		cases.add(key("sf: parameter without a value after =", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=")));
		cases.add(key("sf: upper-case parameter name", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";A=1")));
		cases.add(key("sf: parameter with an unterminated string", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=\"x")));
		cases.add(key("sf: parameter boolean ?2", Problem.invalidKey(), RawRequest.post(REQUIRED).key("\"abc\";a=?2")));
		cases.add(key("sf: parameter decimal with 4 fraction digits", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=1.2345")));
		cases.add(key("sf: parameter integer of 16 digits", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=1234567890123456")));
		cases.add(key("sf: parameter byte sequence that is not base64", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=:!!:")));
		cases.add(key("sf: parameter display string of invalid UTF-8", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("\"abc\";a=%\"%ff\"")));
		cases.add(key("sf: inner list of strings", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("(\"abc\" \"def\")")));
		cases.add(key("sf: display string", Problem.invalidKey(), RawRequest.post(REQUIRED).key("%\"abc\"")));
		// bare values are not parsed as structured fields: these are keys as they are
		cases.add(key("bare inner list without strings (a key as it is)", new Executes("(abc def)"),
				RawRequest.post(REQUIRED).key("(abc def)")));
		cases.add(key("bare byte sequence (a key as it is)", new Executes(":YWJj:"),
				RawRequest.post(REQUIRED).key(":YWJj:")));
		cases.add(key("bare boolean (a key as it is)", new Executes("?1"), RawRequest.post(REQUIRED).key("?1")));
		cases.add(key("bare integer (a key as it is)", new Executes("42"), RawRequest.post(REQUIRED).key("42")));
		cases.add(key("bare negative decimal (a key as it is)", new Executes("-0.5"),
				RawRequest.post(REQUIRED).key("-0.5")));
		cases.add(key("bare date (a key as it is)", new Executes("@1659578233"),
				RawRequest.post(REQUIRED).key("@1659578233")));
		cases.add(key("bare token with a parameter is the victim abc;a=1, not abc", new Replays("abc;a=1"),
				RawRequest.post(REQUIRED).key("abc;a=1")));
	}

	private static void redisAndLua(List<HostileCase> cases) {
		// each a key of its own, next to the victim abc: none may find another's record
		for (String key : List.of("abc*", "abc?", "abc[", "abc]", "abc[a-z]", "abc\\", "abc%", "{abc}", "abc{}",
				"}abc{", "*", "?", "[^a]*", "abc:lock", "abc}:record", "idempo:*", "abc]]..redis.call('flushdb')..[[",
				"abc') return redis.call('keys','*') --", "%s%d%n%x", "KEYS *", "\\x00")) {
			// a bare key may not hold a comma (two keys joined): such a key is sent
			// quoted
			String sent = (key.indexOf(',') >= 0) ? "\"" + key + "\"" : key;
			cases.add(key("redis/lua: " + key, new Executes(key), RawRequest.post(REQUIRED).key(sent)));
		}
		cases.add(key("redis/lua: bare abc') return redis.call('keys','*') -- is two keys", Problem.invalidKey(),
				RawRequest.post(REQUIRED).key("abc') return redis.call('keys','*') --")));
		cases.add(key("redis: quoted abc\"* (a quote and a glob)", new Executes("abc\"*"),
				RawRequest.post(REQUIRED).key("\"abc\\\"*\"")));
	}

	private static void sql(List<HostileCase> cases) {
		for (String key : List.of("'", "''", "abc'", "abc' OR '1'='1", "abc'; DROP TABLE idempo_hostile_absent; --",
				"abc' UNION SELECT storage_key FROM idempo_responses --", "--", "abc -- comment", "/*", "*/abc/*",
				"abc;", "\\'", "abc_", "_bc", "%bc", "$1", "`abc`", "NULL", "0x616263")) {
			cases.add(key("sql: " + key, new Executes(key), RawRequest.post(REQUIRED).key(key)));
		}
	}

	private static void sameKeyWrittenDifferently(List<HostileCase> cases) {
		cases.add(key("abc quoted replays abc", new Replays("abc"), RawRequest.post(REQUIRED).key("\"abc\"")));
		cases.add(key("abc padded with spaces replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("   abc   ")));
		cases.add(key("abc padded with tabs replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key('\t', "abc", '\t')));
		cases.add(key("abc quoted with parameters of every kind replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("\"abc\";a=1;b;c=?0;d=:YWJj:;e=%\"x\";*f=@1;g=-1.5;h=tok")));
		cases.add(key("abc quoted with 1000 parameters (a 7 KB header) replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("\"abc\"" + ";a=1".repeat(1000))));
		cases.add(key("abc with a space after the parameter's semicolon replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("\"abc\"; a=1")));
		cases.add(key("abc through the alias header replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).header("X-Idempotency-Key", "abc")));
		cases.add(key("abc* quoted replays abc*", new Replays("abc*"), RawRequest.post(REQUIRED).key("\"abc*\"")));
		cases.add(key("abc;a=1 quoted replays the bare abc;a=1", new Replays("abc;a=1"),
				RawRequest.post(REQUIRED).key("\"abc;a=1\"")));
		cases.add(key("bare ab\\c replays the quoted ab\\\\c", new Replays("ab\\c"),
				RawRequest.post(REQUIRED).key("ab\\c")));
		cases.add(key("abc def quoted replays abc def", new Replays("abc def"),
				RawRequest.post(REQUIRED).key("\"abc def\"")));
		cases.add(key("255 q's bare replays the quoted key", new Replays("q".repeat(255)),
				RawRequest.post(REQUIRED).key("q".repeat(255))));
		// keys are not URL-decoded: neither is the victim abc def
		cases.add(
				key("abc%20def is not abc def", new Executes("abc%20def"), RawRequest.post(REQUIRED).key("abc%20def")));
		cases.add(key("abc+def is not abc def", new Executes("abc+def"), RawRequest.post(REQUIRED).key("abc+def")));
		cases.add(key("ABC is not abc (keys are case-sensitive)", new Executes("ABC"),
				RawRequest.post(REQUIRED).key("ABC")));
		cases.add(key("abc quoted with another body is key-reused", Problem.keyReused(),
				RawRequest.post(REQUIRED).key("\"abc\";a=1").body("{\"other\":true}")));
		cases.add(key("abc* with another query is key-reused", Problem.keyReused(),
				RawRequest.post(REQUIRED + "?x=1").key("abc*")));
		// the fingerprint covers the path as sent, the raw query and a form's parameters
		cases.add(key("abc with an empty query is key-reused", Problem.keyReused(),
				RawRequest.requestLine("POST " + REQUIRED + "? HTTP/1.1").key("abc")));
		cases.add(key("abc through a percent-encoded path is key-reused", Problem.keyReused(),
				RawRequest.requestLine("POST /t/%72equired HTTP/1.1").key("abc")));
		cases.add(key("abc as a form post is key-reused", Problem.keyReused(),
				RawRequest.post(REQUIRED).key("abc").contentType(FORM_TYPE)));
		cases.add(key("abc with an encoded NUL in the query is key-reused", Problem.keyReused(),
				RawRequest.requestLine("POST " + REQUIRED + "?x=%00 HTTP/1.1").key("abc")));
		cases.add(key("HTTP/1.0 request replays abc", new Replays("abc"),
				RawRequest.requestLine("POST " + REQUIRED + " HTTP/1.0").key("abc")));
		cases.add(key("absolute-form request target replays abc", new Replays("abc"),
				RawRequest.requestLine("POST http://127.0.0.1" + REQUIRED + " HTTP/1.1").key("abc")));
		cases.add(key("bare LF line ends replay abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("abc").bareLineFeeds()));
		cases.add(key("Expect: 100-continue with the body sent at once replays abc", new Replays("abc"),
				RawRequest.post(REQUIRED).key("abc").header("Expect", "100-continue")));
	}

	private static void callers(List<HostileCase> cases) {
		// the same key for another caller is another record (README: caller scope)
		cases.add(key("abc with a bearer token is another caller's abc", new Executes("abc", "Bearer hostile"),
				RawRequest.post(REQUIRED).key("abc").header("Authorization", "Bearer hostile")));
		cases.add(key("abc with another bearer token is a third caller's abc", new Executes("abc", "Bearer hostile'--"),
				RawRequest.post(REQUIRED).key("abc").header("Authorization", "Bearer hostile'--")));
		cases.add(key("basic credentials that are not base64", new Refused(401, Refuser.AUTHENTICATION),
				RawRequest.post(REQUIRED).key("abc").header("Authorization", "Basic !!!")));
		cases.add(key("basic credentials with a wrong password", new Refused(401, Refuser.AUTHENTICATION),
				RawRequest.post(REQUIRED).key("abc").header("Authorization", "Basic YWxpY2U6d3Jvbmc=")));
	}

	private static void malformedRequests(List<HostileCase> cases) {
		cases.add(key("no Host header", Refused.container(), RawRequest.post(REQUIRED).noHost().key("abc")));
		cases.add(key("two Host headers", Refused.container(),
				RawRequest.post(REQUIRED).header("Host", "127.0.0.2").key("abc")));
		cases.add(key("space in the request target", Refused.container(),
				RawRequest.requestLine("POST /t/req uired HTTP/1.1").key("abc")));
		cases.add(key("encoded NUL in the path", Refused.container(),
				RawRequest.requestLine("POST /t/required%00 HTTP/1.1").key("abc")));
		cases.add(key("encoded slash in the path", Refused.container(),
				RawRequest.requestLine("POST /t%2Frequired HTTP/1.1").key("abc")));
		cases.add(key("dot segments in the path", Refused.firewall(),
				RawRequest.requestLine("POST /t/../t/required HTTP/1.1").key("abc")));
		cases.add(key("empty path segment", Refused.firewall(),
				RawRequest.requestLine("POST /t//required HTTP/1.1").key("abc")));
		cases.add(key("path parameter after a semicolon", Refused.firewall(),
				RawRequest.requestLine("POST /t/required;a=1 HTTP/1.1").key("abc")));

		cases.add(key("lower-case method", Refused.firewall(),
				RawRequest.requestLine("post " + REQUIRED + " HTTP/1.1").key("abc")));
		cases.add(key("trailing slash (no handler)", new Refused(404, Refuser.NO_HANDLER),
				RawRequest.requestLine("POST " + REQUIRED + "/ HTTP/1.1").key("abc")));
		cases.add(key("PUT on a POST handler", new Refused(405, Refuser.NO_HANDLER),
				RawRequest.requestLine("PUT " + REQUIRED + " HTTP/1.1").key("abc")));
	}

	private static void bodyFraming(List<HostileCase> cases) {
		String over = "{\"pad\":\"" + "x".repeat(1100) + "\"}";
		cases.add(key("body over max-request-size", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-oversized").body(over)));
		// idempo stops reading at the limit: the answer still reaches a client that is
		// still sending
		String megabytes = "\"" + "x".repeat(3_000_000) + "\"";
		cases.add(key("3 MB body sent in full, Connection: close", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-3mb-close").body(megabytes)));
		cases.add(key("3 MB body sent in full, keep-alive", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-3mb-keep-alive").keepAlive().body(megabytes)));
		cases.add(key("chunked body over max-request-size", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-oversized-chunked").chunked(chunks(over, 100))));
		cases.add(key("chunked {} with a chunk extension replays abc (the fingerprint is of the bytes)",
				new Replays("abc"),
				RawRequest.post(REQUIRED).key("abc").chunked("1\r\n{\r\n1;ext=\"v\"\r\n}\r\n0\r\n\r\n")));
		// Tomcat lets Transfer-Encoding override Content-Length (RFC 9112, 6.3) and
		// closes the connection afterwards
		cases.add(key("Content-Length and Transfer-Encoding together (chunked wins, abc replayed)", new Replays("abc"),
				RawRequest.post(REQUIRED).key("abc").chunked("2\r\n{}\r\n0\r\n\r\n").contentLength("100")));
		cases.add(key("two different Content-Length headers", Refused.container(),
				RawRequest.post(REQUIRED).key("body-two-cl").header("Content-Length", "3")));
		cases.add(key("two equal Content-Length headers", Refused.container(),
				RawRequest.post(REQUIRED).key("body-two-equal-cl").header("Content-Length", "2")));
		cases.add(key("Transfer-Encoding chunked twice", Refused.container(),
				RawRequest.post(REQUIRED)
					.key("body-chunked-twice")
					.header("Transfer-Encoding", "chunked, chunked")
					.noContentLength()
					.body("2\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("negative Content-Length", Refused.container(),
				RawRequest.post(REQUIRED).key("body-negative-cl").contentLength("-1")));
		cases.add(key("Content-Length not a number", Refused.container(),
				RawRequest.post(REQUIRED).key("body-nan-cl").contentLength("two")));
		cases.add(key("Content-Length with a sign", Refused.container(),
				RawRequest.post(REQUIRED).key("body-signed-cl").contentLength("+2")));
		cases.add(key("Content-Length of 20 digits", Refused.container(),
				RawRequest.post(REQUIRED).key("body-huge-cl").contentLength("99999999999999999999")));
		cases.add(key("chunk size not hex", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-zz").chunked("zz\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("negative chunk size", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-negative").chunked("-2\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("chunk size of 17 hex digits", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-overflow").chunked("10000000000000002\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("chunk size with 0x prefix", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-0x").chunked("0x2\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("chunk data longer than its size", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-long").chunked("1\r\n{}\r\n0\r\n\r\n")));
		cases.add(key("chunk without CRLF after its data", Refused.body(),
				RawRequest.post(REQUIRED).key("body-chunk-no-crlf").chunked("2\r\n{}0\r\n\r\n")));
		cases.add(key("malformed trailer", Refused.body(),
				RawRequest.post(REQUIRED).key("body-trailer").chunked("2\r\n{}\r\n0\r\nbroken trailer\r\n\r\n")));
	}

	private static void incompleteBodies(List<HostileCase> cases) {
		// a half-closed connection ends the body early (400); a silent one times out
		// (408); a body of declared length streams, so the handler (which reads none
		// of it) runs before its end is known
		cases.add(abandonedAfterHandler("Content-Length 100, 10 bytes sent, half-closed", Ending.HALF_CLOSE, 400,
				"body-truncated-half-closed", (request) -> request.body("{\"a\":\"123\"").contentLength("100"), false));
		cases.add(abandonedAfterHandler("Content-Length 100, 10 bytes sent, then silence", Ending.KEEP_OPEN, 408,
				"body-truncated-stalled", (request) -> request.body("{\"a\":\"123\"").contentLength("100"), false));
		cases.add(abandoned("chunked body without its last chunk, half-closed", Ending.HALF_CLOSE, 400,
				"body-chunked-half-closed", (request) -> request.chunked("2\r\n{}\r\n")));
		cases.add(abandoned("chunked body without its last chunk, then silence", Ending.KEEP_OPEN, 408,
				"body-chunked-stalled", (request) -> request.chunked("2\r\n{}\r\n")));
		cases.add(abandoned("chunk cut inside its data, then silence", Ending.KEEP_OPEN, 408, "body-chunk-cut-stalled",
				(request) -> request.chunked("a\r\n{\"a\"")));
		cases.add(abandonedAfterHandler("Expect: 100-continue, then no body", Ending.KEEP_OPEN, 408,
				"body-expect-stalled",
				(request) -> request.header("Expect", "100-continue").body("").contentLength("2"), true));
		String over = "{\"pad\":\"" + "x".repeat(1100);
		cases.add(key("Content-Length 1 MB, 1 KB over the limit sent, then silence", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-oversized-stalled").body(over).contentLength("1048576")));
		cases.add(key("Content-Length 1 TB, 1 KB over the limit sent, half-closed", Problem.tooLarge(),
				RawRequest.post(REQUIRED).key("body-oversized-half-closed").body(over).contentLength("1099511627776"),
				Ending.HALF_CLOSE));
	}

	private static void bodiesTheHandlerRefuses(List<HostileCase> cases) {
		cases.add(orders("invalid JSON", 400, "{\"item\":", "application/json"));
		cases.add(orders("not JSON", 400, "<order/>", "application/json"));
		cases.add(orders("a string where a number belongs", 400, "{\"item\":\"x\",\"quantity\":\"many\"}",
				"application/json"));
		cases.add(orders("JSON null", 400, "null", "application/json"));
		cases.add(orders("empty body", 400, "", "application/json"));
		cases.add(orders("number out of range", 400, "{\"item\":\"x\",\"quantity\":1e999}", "application/json"));
		cases.add(orders("arrays nested 400 deep", 400, "[".repeat(400) + "]".repeat(400), "application/json"));
		cases.add(orders("unsupported media type", 415, "{\"item\":\"x\",\"quantity\":1}", "text/plain"));
		cases.add(orders("unknown charset", 415, "{\"item\":\"x\",\"quantity\":1}",
				"application/json;charset=x-no-such-charset"));
		cases.add(orders("malformed media type", 415, "{\"item\":\"x\",\"quantity\":1}", "application/;;;"));
		cases.add(key("@PathVariable refuses a path segment that is not a number",
				new RejectedBeforeHandler(400, "path-variable"),
				RawRequest.requestLine("POST /t/status/%C3%A9 HTTP/1.1").key("path-variable")));
		// Spring MVC finds it cannot write the handler's result only after the handler
		// ran: that 406 is its response, stored and replayed
		cases.add(key("Accept: text/html, which the handler cannot produce", new Executes("accept-html", null, 406),
				RawRequest.post(REQUIRED).key("accept-html").header("Accept", "text/html")));
		cases.add(key("Accept: image/png, which the handler cannot produce", new Executes("accept-png", null, 406),
				RawRequest.post(REQUIRED).key("accept-png").header("Accept", "image/png")));
		cases
			.add(key("undecodable percent-encoding in the query (fingerprinted raw)", new Executes("query-bad-percent"),
					RawRequest.requestLine("POST " + REQUIRED + "?x=%zz HTTP/1.1").key("query-bad-percent")));
		cases.add(orders("invalid UTF-8 in a string", 400,
				RawRequest.bytes("{\"item\":\"", 0xC3, "(\",\"quantity\":1}"), "application/json"));
		cases.add(orders("NUL inside a string", 400, RawRequest.bytes("{\"item\":\"a", 0x00, "b\",\"quantity\":1}"),
				"application/json"));
	}

	private static void forms(List<HostileCase> cases) {
		// form bodies are parsed by Tomcat for the fingerprint; a parameter it cannot
		// decode is its 400, a body cut short closes the connection without an answer
		cases.add(form("form: undecodable percent-encoding", Refused.body(), "form-bad-percent", "amount=%zz"));
		cases.add(form("form: more parameters than Tomcat's limit", Refused.body(), "form-many",
				"amount=1" + "&p=1".repeat(1000)));
		cases.add(form("form: percent-encoded invalid UTF-8", Refused.body(), "form-bad-utf8", "amount=%C3%28"));
		cases.add(new HostileCase("form: undecodable percent-encoding in the query", "form",
				RawRequest.requestLine("POST " + FORM + "?amount=%zz HTTP/1.1")
					.key("form-bad-query")
					.contentType(FORM_TYPE)
					.body("other=1")
					.build(),
				Ending.KEEP_OPEN, Refused.body()));
		cases.add(new HostileCase("form: unknown charset", "form",
				RawRequest.post(FORM)
					.key("form-charset")
					.contentType(FORM_TYPE + ";charset=x-no-such-charset")
					.body("amount=1")
					.build(),
				Ending.KEEP_OPEN, new Refused(415, Refuser.BODY)));
		// refused for its declared length, before a byte of it is read
		cases.add(new HostileCase("form: Content-Length over Tomcat's maxPostSize (2 MB), then silence", "form",
				formRequest("form-too-large-stalled").contentLength("3000000").build(), Ending.KEEP_OPEN,
				new Refused(413, Refuser.BODY)));
		cases.add(new HostileCase("form: Content-Length over Tomcat's maxPostSize (2 MB), half-closed", "form",
				formRequest("form-too-large-half-closed").contentLength("3000000").build(), Ending.HALF_CLOSE,
				new Refused(413, Refuser.BODY)));
		cases.add(form("form: percent-encoded NUL (a value like any other)", new Executes("form-nul"), "form-nul",
				"amount=%00"));
		cases.add(form("form: UTF-8 e-acute (a value like any other)", new Executes("form-utf-8"), "form-utf-8",
				"amount=\u00e9"));
		cases.add(new HostileCase("form: a raw Latin-1 byte (not UTF-8)", "form",
				formRequest("form-latin-1").body(RawRequest.bytes("amount=", 0xE9)).build(), Ending.KEEP_OPEN,
				Refused.body()));
		cases.add(form("form: without the handler's parameter",
				new RejectedBeforeHandler(400, "form-missing", formRequest("form-missing").build(), 200),
				"form-missing", "other=1"));
		cases.add(new HostileCase("form: Content-Length 100, 8 bytes sent, half-closed", "form",
				formRequest("form-truncated-half-closed").body("amount=1").contentLength("100").build(),
				Ending.HALF_CLOSE,
				new Abandoned(-1, "form-truncated-half-closed", formRequest("form-truncated-half-closed").build())));
		cases.add(new HostileCase("form: Content-Length 100, 8 bytes sent, then silence", "form",
				formRequest("form-truncated-stalled").body("amount=1").contentLength("100").build(), Ending.KEEP_OPEN,
				new Abandoned(-1, "form-truncated-stalled", formRequest("form-truncated-stalled").build())));
		cases.add(new HostileCase("form: chunked without its last chunk, half-closed", "form",
				formRequest("form-chunked-half-closed").chunked("8\r\namount=1\r\n").build(), Ending.HALF_CLOSE,
				new Abandoned(-1, "form-chunked-half-closed", formRequest("form-chunked-half-closed").build())));
	}

	private static RawRequest formRequest(String key) {
		return RawRequest.post(FORM).key(key).contentType(FORM_TYPE).body("amount=1");
	}

	private static HostileCase form(String name, Expected expected, String key, String body) {
		return new HostileCase(name, "form", formRequest(key).body(body).build(), Ending.KEEP_OPEN, expected);
	}

	private static HostileCase key(String name, Expected expected, RawRequest request) {
		return key(name, expected, request, Ending.KEEP_OPEN);
	}

	private static HostileCase key(String name, Expected expected, RawRequest request, Ending ending) {
		return new HostileCase(name, "required", request.build(), ending, expected);
	}

	private static HostileCase abandoned(String name, Ending ending, int status, String key,
			UnaryOperator<RawRequest> incomplete) {
		return new HostileCase(name, "required", incomplete.apply(RawRequest.post(REQUIRED).key(key)).build(), ending,
				new Abandoned(status, key, RawRequest.post(REQUIRED).key(key).build()));
	}

	private static HostileCase abandonedAfterHandler(String name, Ending ending, int status, String key,
			UnaryOperator<RawRequest> incomplete, boolean replays) {
		return new HostileCase(name, "required", incomplete.apply(RawRequest.post(REQUIRED).key(key)).build(), ending,
				new AbandonedAfterHandler(status, key, RawRequest.post(REQUIRED).key(key).build(), replays));
	}

	private static HostileCase orders(String name, int status, String body, String contentType) {
		return orders(name, status, body.getBytes(StandardCharsets.UTF_8), contentType);
	}

	private static HostileCase orders(String name, int status, byte[] body, String contentType) {
		String key = "orders-" + name.replace(' ', '-');
		return new HostileCase("@RequestBody refuses " + name, "orders",
				RawRequest.post(ORDERS).key(key).contentType(contentType).body(body).build(), Ending.KEEP_OPEN,
				new RejectedBeforeHandler(status, key,
						RawRequest.post(ORDERS)
							.key(key)
							.contentType("application/json")
							.body("{\"item\":\"x\",\"quantity\":1}")
							.build(),
						201));
	}

	private static String chunks(String body, int size) {
		StringBuilder chunked = new StringBuilder();
		for (int i = 0; i < body.length(); i += size) {
			String chunk = body.substring(i, Math.min(body.length(), i + size));
			chunked.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk).append("\r\n");
		}
		return chunked.append("0\r\n\r\n").toString();
	}

}
