-- Reads one identity's counters without changing them (the usage of a key): the server's clock
-- and the raw fields that consume.lua writes. The rules (roll-over, decay) are applied by
-- peekState() in src/limits/policy.ts, the same function the in-memory limiter uses.
--
-- KEYS[1]  the identity's hash, e.g. as:rl:{k:abc}; for a keyless address, KEYS[2] is its
--          overflow counter, read when the address has no counter of its own (consume.lua)
-- Returns  { now (ms), minuteStart, minuteCount, minuteRejected, dayStart, dayCount,
--            banUntil, banLevel, banLevelExpiresAt } (0 for a missing field)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', KEYS[1], 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx')
if #KEYS == 2 and not f[1] then f = redis.call('HMGET', KEYS[2], 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx') end
local out = { now }
for i = 1, 8 do out[i + 1] = tonumber(f[i]) or 0 end
return out
