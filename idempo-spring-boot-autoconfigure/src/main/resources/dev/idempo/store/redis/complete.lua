-- Stores a record and releases the lock, only while the owner token holds the lock.
-- KEYS[1] lock key, KEYS[2] record key (one hash tag, so one Cluster slot)
-- ARGV[1] owner token, ARGV[2] fingerprint, ARGV[3] response, ARGV[4] record TTL in milliseconds
-- Returns 1 if stored, 0 if the token no longer holds the lock (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('HSET', KEYS[2], 'fingerprint', ARGV[2], 'response', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[1])
return 1
