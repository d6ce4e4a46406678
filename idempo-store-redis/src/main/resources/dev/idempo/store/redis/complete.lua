-- Stores a record and releases the lock, only while the owner token holds the lock.
-- KEYS[1] lock key, KEYS[2] record key (one hash tag, so one Cluster slot)
-- ARGV[1] owner token, ARGV[2] fingerprint, ARGV[3] response, ARGV[4] record TTL in milliseconds,
-- ARGV[5] this call's own id
-- Returns 1 if stored, 0 if the token no longer holds the lock (nothing written). The same call
-- sent again (a client resends what was in flight when it reconnects) finds its own record and
-- returns 1 again; another call with the same token returns 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	if redis.call('HGET', KEYS[2], 'completion') == ARGV[5] then
		-- written again so that a WAIT that follows on this connection waits for the
		-- replicas to have the record (WAIT counts this connection's own writes)
		redis.call('HSET', KEYS[2], 'completion', ARGV[5])
		return 1
	end
	return 0
end
redis.call('HSET', KEYS[2], 'fingerprint', ARGV[2], 'response', ARGV[3], 'completion', ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[1])
return 1
