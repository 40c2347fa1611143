/**
 * Appends one relayed event to its rundown's stream and to the index, atomically, unless this
 * source already relayed this seq (or a later one) for the rundown: a repeated append is a no-op,
 * so re-relaying after a crash can never duplicate an event. Then trims both streams.
 *
 * KEYS: 1 rundown stream, 2 relayed hash, 3 index stream
 * ARGV: 1 source, 2 seq, 3 encoded event, 4 rundown id, 5 max length, 6 max age ms,
 *       7 index max length, 8 idle ttl ms (0: none)
 * Returns the new entry id, or false when it was a repeat.
 *
 * The relayed hash also holds `~trimmed`: the newest entry id trimming removed (see isContinuous).
 *
 * Trimming keeps every entry that is among the newest `max length` OR younger than `max age`: it
 * removes, oldest first, only entries that are both beyond the count and older than the age (at
 * most 1,000 per call, so the cost is bounded and amortized O(1): every entry scanned is removed).
 */
export const appendScript = `
local function trim(key, maxLen, cutoffMs, markKey)
  local excess = redis.call('XLEN', key) - maxLen
  if excess <= 0 then return end
  if excess > 1000 then excess = 1000 end
  local old = redis.call('XRANGE', key, '-', tostring(cutoffMs - 1), 'COUNT', excess)
  if #old == 0 then return end
  local ms, n = string.match(old[#old][1], '^(%d+)%-(%d+)$')
  redis.call('XTRIM', key, 'MINID', ms .. '-' .. tostring(tonumber(n) + 1))
  -- XTRIM does not move the stream's max-deleted-entry-id (Redis 7.0): keep the mark ourselves.
  if markKey then redis.call('HSET', markKey, '~trimmed', old[#old][1]) end
end

local last = redis.call('HGET', KEYS[2], ARGV[1])
if last and tonumber(last) >= tonumber(ARGV[2]) then return false end
local id = redis.call('XADD', KEYS[1], '*', 'src', ARGV[1], 'seq', ARGV[2], 'e', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('XADD', KEYS[3], '*', 'r', ARGV[4], 'id', id)
local now = redis.call('TIME')
local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[6])
trim(KEYS[1], tonumber(ARGV[5]), cutoffMs, KEYS[2])
trim(KEYS[3], tonumber(ARGV[7]), cutoffMs, nil)
local ttl = tonumber(ARGV[8])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return id
`;
