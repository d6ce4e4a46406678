-- Claims a key or fetches its completed record, atomically.
-- KEYS[1] lock key, KEYS[2] record key (one hash tag, so one Cluster slot)
-- ARGV[1] owner token, ARGV[2] lease length in milliseconds
-- Returns {'completed', fingerprint, response, milliseconds the record has left}, {'acquired'}
-- or {'in-progress'}.
local record = redis.call('HMGET', KEYS[2], 'fingerprint', 'response')
if record[1] then
	return { 'completed', record[1], record[2], redis.call('PTTL', KEYS[2]) }
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return { 'acquired' }
end
return { 'in-progress' }
