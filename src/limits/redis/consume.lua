-- One rate-limit decision for one identity, atomically: mirrors consumeOne() in
-- src/limits/policy.ts line for line. Any change to the rules goes into both.
--
-- KEYS[1]  the identity's hash, e.g. as:rl:{k:abc} (the hash tag keeps it in one cluster slot)
-- ARGV     perMinute, perDay, ban threshold (already resolved), ban baseSeconds, ban maxSeconds
-- Returns  { allowed (0|1), reason (0 none, 1 rate_limited, 2 key_banned), now (ms),
--            minuteRemaining, dayRemaining, minuteResetAt (s), dayResetAt (s),
--            retryAfter (s), banStarted (0|1) }
--
-- Time comes from Redis (TIME), not from the caller, so instances with skewed clocks agree on
-- window boundaries and ban ends. Redis < 5 needs effects replication to write after TIME.
if redis.replicate_commands ~= nil then redis.replicate_commands() end

local MINUTE_MS = 60000
local DAY_MS = 86400000
local BAN_MEMORY_MS = DAY_MS

local key = KEYS[1]
local perMinute = tonumber(ARGV[1])
local perDay = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local baseSeconds = tonumber(ARGV[4])
local maxSeconds = tonumber(ARGV[5])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local f = redis.call('HMGET', key, 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx')
local s = {
  minuteStart = tonumber(f[1]) or 0,
  minuteCount = tonumber(f[2]) or 0,
  minuteRejected = tonumber(f[3]) or 0,
  dayStart = tonumber(f[4]) or 0,
  dayCount = tonumber(f[5]) or 0,
  banUntil = tonumber(f[6]) or 0,
  banLevel = tonumber(f[7]) or 0,
  banLevelExpiresAt = tonumber(f[8]) or 0,
}

local minuteStart = now - (now % MINUTE_MS)
local dayStart = now - (now % DAY_MS)
if s.minuteStart ~= minuteStart then
  s.minuteStart = minuteStart
  s.minuteCount = 0
  s.minuteRejected = 0
end
if s.dayStart ~= dayStart then
  s.dayStart = dayStart
  s.dayCount = 0
end
if s.banLevel > 0 and now >= s.banLevelExpiresAt then s.banLevel = 0 end

local minuteReset = (minuteStart + MINUTE_MS) / 1000
local dayReset = (dayStart + DAY_MS) / 1000

-- Persists the state; it expires once nothing in it matters any more (isStale() in policy.ts):
-- the day window is over, the ban is over and the ban level has decayed.
local function save()
  redis.call('HSET', key,
    'ms', s.minuteStart, 'mc', s.minuteCount, 'mr', s.minuteRejected,
    'ds', s.dayStart, 'dc', s.dayCount,
    'bu', s.banUntil, 'bl', s.banLevel, 'bx', s.banLevelExpiresAt)
  local keepUntil = math.max(s.dayStart + DAY_MS, s.banUntil)
  if s.banLevel > 0 then keepUntil = math.max(keepUntil, s.banLevelExpiresAt) end
  redis.call('PEXPIRE', key, math.max(1, keepUntil - now))
end

local function decision(allowed, reason, retryAfter, banStarted)
  save()
  return {
    allowed, reason, now,
    math.max(0, perMinute - s.minuteCount), math.max(0, perDay - s.dayCount),
    minuteReset, dayReset, retryAfter, banStarted,
  }
end

if now < s.banUntil then
  return decision(0, 2, math.ceil((s.banUntil - now) / 1000), 0)
end
if s.minuteCount < perMinute and s.dayCount < perDay then
  s.minuteCount = s.minuteCount + 1
  s.dayCount = s.dayCount + 1
  return decision(1, 0, 0, 0)
end
s.minuteRejected = s.minuteRejected + 1
if s.minuteRejected >= threshold then
  s.banLevel = s.banLevel + 1
  local seconds = math.min(baseSeconds * 2 ^ math.min(s.banLevel - 1, 30), maxSeconds)
  s.banUntil = now + seconds * 1000
  s.banLevelExpiresAt = s.banUntil + BAN_MEMORY_MS
  s.minuteRejected = 0
  return decision(0, 2, seconds, 1)
end
local untilSec = 0
if s.minuteCount >= perMinute then untilSec = math.max(untilSec, minuteReset) end
if s.dayCount >= perDay then untilSec = math.max(untilSec, dayReset) end
return decision(0, 1, math.max(1, math.ceil(untilSec - now / 1000)), 0)
