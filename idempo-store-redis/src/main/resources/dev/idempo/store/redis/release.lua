-- Deletes the lock, only while the owner token holds it.
-- KEYS[1] lock key; ARGV[1] owner token
-- Returns 1 if released, 0 if the token no longer held the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
