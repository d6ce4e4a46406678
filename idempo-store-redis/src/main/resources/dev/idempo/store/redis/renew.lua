-- Extends the lock's lease, only while the owner token holds it.
-- KEYS[1] lock key; ARGV[1] owner token, ARGV[2] new lease length in milliseconds
-- Returns 1 if extended, 0 if the token no longer held the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
