-- wrk script of benchmark/run.sh. Every mode formats each request in Lua, so the client does
-- the same work for the baseline as for the protected cases.
--
--   wrk ... -s bench.lua URL -- MODE EXPECT PREFIX KEYS BODY_FILE THREADS
--
-- MODE    plain  no key
--         fresh  a new key per request: PREFIX-<thread>-<counter>
--         cycle  the keys PREFIX-0 .. PREFIX-(KEYS-1), each thread from its own offset
--         fixed  the one key PREFIX
--         mixed  warm-up: /plain, /idem fresh, /idem without key, /pay-plain, /pay-idem fresh,
--                /idem replay of an earlier key, in turn
-- EXPECT  the status every response must have (mixed: 201, or 409 for the replay)
--
-- done() prints one tab-separated line:
--   RESULT requests duration_us p50_us p99_us expected unexpected replayed socket_errors
--   timeouts unexpected_statuses
-- where unexpected_statuses is "-" or "status:count,...".

local threads = {}

function setup(thread)
	thread:set("tid", #threads + 1)
	table.insert(threads, thread)
end

function init(args)
	mode = args[1]
	expect = tonumber(args[2])
	prefix = args[3]
	keys = tonumber(args[4])
	local file = assert(io.open(args[5], "rb"))
	body = file:read("*a")
	file:close()
	local thread_count = tonumber(args[6])
	offset = (tid - 1) * math.floor(keys / thread_count)
	counter = 0
	expected = 0
	unexpected = 0
	replayed = 0
	unexpected_statuses = ""
	unexpected_counts = {}
	headers = { ["Content-Type"] = "application/json" }
	if mode == "fixed" then
		headers["Idempotency-Key"] = prefix
	end
	mixed_paths = { "/plain", "/idem", "/idem", "/pay-plain", "/pay-idem", "/idem" }
	mixed_step = 0
end

function request()
	counter = counter + 1
	local path = wrk.path
	if mode == "fresh" then
		headers["Idempotency-Key"] = prefix .. "-" .. tid .. "-" .. counter
	elseif mode == "cycle" then
		headers["Idempotency-Key"] = prefix .. "-" .. ((offset + counter - 1) % keys)
	elseif mode == "mixed" then
		mixed_step = (counter - 1) % 6 + 1
		path = mixed_paths[mixed_step]
		if mixed_step == 2 or mixed_step == 5 then
			headers["Idempotency-Key"] = prefix .. "-" .. tid .. "-" .. counter
		elseif mixed_step == 6 and counter > 600 then
			-- the /idem key sent 100 turns earlier, long completed
			headers["Idempotency-Key"] = prefix .. "-" .. tid .. "-" .. (counter - 604)
		else
			headers["Idempotency-Key"] = nil
		end
	end
	return wrk.format("POST", path, headers, body)
end

function response(status, response_headers, response_body)
	local flag = response_headers["Idempotent-Replayed"] or response_headers["idempotent-replayed"]
	if flag == "true" then
		replayed = replayed + 1
	end
	if status == expect or (mode == "mixed" and status == 409) then
		expected = expected + 1
	else
		unexpected = unexpected + 1
		unexpected_counts[status] = (unexpected_counts[status] or 0) + 1
		local parts = {}
		for code, count in pairs(unexpected_counts) do
			table.insert(parts, code .. ":" .. count)
		end
		unexpected_statuses = table.concat(parts, ",")
	end
end

function done(summary, latency, requests)
	local total_expected, total_unexpected, total_replayed = 0, 0, 0
	local statuses = {}
	for _, thread in ipairs(threads) do
		total_expected = total_expected + thread:get("expected")
		total_unexpected = total_unexpected + thread:get("unexpected")
		total_replayed = total_replayed + thread:get("replayed")
		local list = thread:get("unexpected_statuses")
		if list ~= "" then
			table.insert(statuses, list)
		end
	end
	local errors = summary.errors
	local status_list = "-"
	if #statuses > 0 then
		status_list = table.concat(statuses, ",")
	end
	io.write(string.format("RESULT\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", summary.requests, summary.duration,
		latency:percentile(50), latency:percentile(99), total_expected, total_unexpected, total_replayed,
		errors.connect + errors.read + errors.write, errors.timeout, status_list))
end
