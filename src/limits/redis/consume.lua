-- One rate-limit decision for one identity, atomically: mirrors consumeOne() in
-- src/limits/policy.ts line for line. Any change to the rules goes into both.
--
-- KEYS[1]  the identity's hash, e.g. as:rl:{k:abc} (the hash tag keeps it in one cluster slot)
--          A keyless client's address comes with two more keys of the same slot (limiter-keys.ts):
--          as:rl:{addresses:7}:a:203.0.113.7, its table's count as:rl:{addresses:7}:count and
--          its overflow counter as:rl:{addresses:7}:overflow:519.
-- ARGV     perMinute, perDay, ban threshold (already resolved), ban baseSeconds, ban maxSeconds,
--          want (admissions to reserve: 1 for one request, more for a lease, leases.ts),
--          and for an address the table's bound (addresses admitted a day into this table)
-- Returns  { allowed (0|1), reason (0 none, 1 rate_limited, 2 key_banned), now (ms),
--            minuteRemaining, dayRemaining (of the first admission reserved), minuteResetAt (s),
--            dayResetAt (s), retryAfter (s), banStarted (0|1), granted (admissions reserved),
--            banUntil (ms; 0 when not banned: until then every request is refused and changes
--            nothing, so an instance may refuse them without asking, leases.ts) }
--
-- A call that asks for `want` admissions reserves up to that many consecutive ones in both
-- windows at once (never past either limit), or refuses exactly as a call for one would: with
-- want = 1 this is consumeOne() of policy.ts.
--
-- Time comes from Redis (TIME), not from the caller, so instances with skewed clocks agree on
-- window boundaries and ban ends. Redis < 5 needs effects replication to write after TIME.
--
-- This runs on every request, in Redis, on cores the service shares: it keeps the state in plain
-- locals (no table or closure per call: they were most of the script's cost), writes only the
-- fields that changed, and sets the expiry only when it moves, so the common answer (same minute,
-- no ban) is TIME, HMGET and an HSET of two fields.
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
local want = tonumber(ARGV[6])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- f: what the hash holds (only what changed is written back); s: the state the decision starts from.
local f, s
if #KEYS == 1 then
  f = redis.call('HMGET', key, 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx')
else
  f = redis.call('HMGET', key, 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx', 'td')
end
s = f

-- A keyless address has a hash of its own once admitted to today's table ('td', the day it was),
-- while the table has room (at most ARGV[7] admissions a day); after that it is counted in its
-- overflow counter. A new address starts from a copy of that counter, and an address kept from an
-- earlier day (by a ban) that finds the table full is folded into it (foldState() in policy.ts):
-- neither move hands a client requests back. The in-memory limiter's bound is the same idea,
-- counted in its map (memory-limiter.ts).
local today = now - (now % DAY_MS)
if #KEYS == 3 and tonumber(f[9]) ~= today then
  local tableDay, admitted = unpack(redis.call('HMGET', KEYS[2], 'day', 'n'))
  admitted = tonumber(tableDay) == today and tonumber(admitted) or 0
  if admitted < tonumber(ARGV[7]) then
    redis.call('HSET', KEYS[2], 'day', today, 'n', admitted + 1)
    redis.call('PEXPIRE', KEYS[2], today + DAY_MS - now)
    redis.call('HSET', key, 'td', today)
    if not f[1] then s = redis.call('HMGET', KEYS[3], 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx') end
  else
    local b = redis.call('HMGET', KEYS[3], 'ms', 'mc', 'mr', 'ds', 'dc', 'bu', 'bl', 'bx')
    s = {}
    for i = 1, 8 do s[i] = tonumber(b[i]) or 0 end
    if f[1] then
      local a = {}
      for i = 1, 8 do a[i] = tonumber(f[i]) or 0 end
      if a[1] > s[1] then
        s[1], s[2], s[3] = a[1], a[2], a[3]
      elseif a[1] == s[1] then
        s[2], s[3] = math.max(s[2], a[2]), math.max(s[3], a[3])
      end
      if a[4] > s[4] then
        s[4], s[5] = a[4], a[5]
      elseif a[4] == s[4] then
        s[5] = math.max(s[5], a[5])
      end
      for i = 6, 8 do s[i] = math.max(s[i], a[i]) end
      redis.call('DEL', key)
    end
    key = KEYS[3]
    f = b
  end
end

local storedMs, storedMc, storedMr = tonumber(f[1]), tonumber(f[2]), tonumber(f[3])
local storedDs, storedDc = tonumber(f[4]), tonumber(f[5])
local storedBu, storedBl, storedBx = tonumber(f[6]), tonumber(f[7]), tonumber(f[8])
local minuteStart0 = storedMs or 0
local minuteCount = storedMc or 0
local minuteRejected = storedMr or 0
local dayStart0 = storedDs or 0
local dayCount = storedDc or 0
local banUntil = storedBu or 0
local banLevel = storedBl or 0
local banLevelExpiresAt = storedBx or 0
if s ~= f then -- an address starting from its overflow counter's state (a copy, or with its own folded in)
  minuteStart0, minuteCount, minuteRejected = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0
  dayStart0, dayCount = tonumber(s[4]) or 0, tonumber(s[5]) or 0
  banUntil, banLevel, banLevelExpiresAt = tonumber(s[6]) or 0, tonumber(s[7]) or 0, tonumber(s[8]) or 0
end

-- When the state expires once nothing in it matters any more (isStale() in policy.ts): the day
-- window is over, the ban is over and the ban level has decayed. An existing hash expires at the
-- value of what it holds (the last write set it so), taken before the windows roll over below.
local storedKeepUntil = false
if f[1] then
  storedKeepUntil = math.max((storedDs or 0) + DAY_MS, storedBu or 0)
  if (storedBl or 0) > 0 and (storedBx or 0) > storedKeepUntil then storedKeepUntil = storedBx end
end

local minuteStart = now - (now % MINUTE_MS)
local dayStart = now - (now % DAY_MS)
if minuteStart0 ~= minuteStart then
  minuteCount = 0
  minuteRejected = 0
end
if dayStart0 ~= dayStart then dayCount = 0 end
if banLevel > 0 and now >= banLevelExpiresAt then banLevel = 0 end

local minuteReset = (minuteStart + MINUTE_MS) / 1000
local dayReset = (dayStart + DAY_MS) / 1000

local allowed, reason, retryAfter, banStarted, granted = 0, 0, 0, 0, 0
if now < banUntil then
  reason = 2
  retryAfter = math.ceil((banUntil - now) / 1000)
elseif minuteCount < perMinute and dayCount < perDay then
  granted = math.min(want, perMinute - minuteCount, perDay - dayCount)
  minuteCount = minuteCount + granted
  dayCount = dayCount + granted
  allowed = 1
else
  minuteRejected = minuteRejected + 1
  if minuteRejected >= threshold then
    banLevel = banLevel + 1
    local seconds = math.min(baseSeconds * 2 ^ math.min(banLevel - 1, 30), maxSeconds)
    banUntil = now + seconds * 1000
    banLevelExpiresAt = banUntil + BAN_MEMORY_MS
    minuteRejected = 0
    reason = 2
    retryAfter = seconds
    banStarted = 1
  else
    local untilSec = 0
    if minuteCount >= perMinute then untilSec = math.max(untilSec, minuteReset) end
    if dayCount >= perDay then untilSec = math.max(untilSec, dayReset) end
    reason = 1
    retryAfter = math.max(1, math.ceil(untilSec - now / 1000))
  end
end

-- Persist what changed.
local args, n = {}, 0
if minuteStart ~= storedMs then args[n + 1], args[n + 2], n = 'ms', minuteStart, n + 2 end
if minuteCount ~= storedMc then args[n + 1], args[n + 2], n = 'mc', minuteCount, n + 2 end
if minuteRejected ~= storedMr then args[n + 1], args[n + 2], n = 'mr', minuteRejected, n + 2 end
if dayStart ~= storedDs then args[n + 1], args[n + 2], n = 'ds', dayStart, n + 2 end
if dayCount ~= storedDc then args[n + 1], args[n + 2], n = 'dc', dayCount, n + 2 end
if banUntil ~= storedBu then args[n + 1], args[n + 2], n = 'bu', banUntil, n + 2 end
if banLevel ~= storedBl then args[n + 1], args[n + 2], n = 'bl', banLevel, n + 2 end
if banLevelExpiresAt ~= storedBx then args[n + 1], args[n + 2], n = 'bx', banLevelExpiresAt, n + 2 end
if n > 0 then redis.call('HSET', key, unpack(args)) end
local keepUntil = math.max(dayStart + DAY_MS, banUntil)
if banLevel > 0 and banLevelExpiresAt > keepUntil then keepUntil = banLevelExpiresAt end
if keepUntil ~= storedKeepUntil then redis.call('PEXPIRE', key, math.max(1, keepUntil - now)) end

-- Remaining as the first admission reserved leaves it (the others' follow, one less each).
local unusedAfterFirst = math.max(0, granted - 1)
return {
  allowed, reason, now,
  math.max(0, perMinute - minuteCount + unusedAfterFirst), math.max(0, perDay - dayCount + unusedAfterFirst),
  minuteReset, dayReset, retryAfter, banStarted, granted, reason == 2 and banUntil or 0,
}
