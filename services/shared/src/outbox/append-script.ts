/**
 * Appends a batch of relayed events (in seq order) to their rundowns' streams and to the index,
 * atomically, each unless its source already relayed that seq (or a later one) for the rundown: a
 * repeated append is a no-op, so re-relaying after a crash can never duplicate an event. Then trims
 * each touched stream and the index once, and refreshes the touched streams' expiry once.
 *
 * KEYS: 1 index stream, then per event: rundown stream, relayed hash
 * ARGV: 1 source, 2 max length, 3 max age ms, 4 index max length, 5 idle ttl ms (0: none),
 *       then per event: seq, encoded event, rundown id, kind (the Kind enum's number)
 * Returns, per event, the new entry id or false when it was a repeat.
 *
 * One call per batch rather than one per event: per event, the call's own cost (arguments,
 * script lookup, reply) was a share of a bulk write's relay comparable to the appends themselves.
 *
 * The relayed hash also holds `~trimmed`: the newest entry id trimming removed (see isContinuous).
 *
 * Trimming keeps every entry that is among the newest `max length` OR younger than `max age`: it
 * removes, oldest first, only entries that are both beyond the count and older than the age (at
 * most 1,000 per stream and call, so the cost is bounded and amortized O(1): every entry scanned is
 * removed, and a call appends at most as many as the relay's batch).
 */
export const appendBatchScript = `
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

local source = ARGV[1]
local ids = {}
local touched = {}
local order = {}
for i = 1, (#KEYS - 1) / 2 do
  local stream, relayed = KEYS[2 * i], KEYS[2 * i + 1]
  local seq, event, rundown, kind = ARGV[4 * i + 2], ARGV[4 * i + 3], ARGV[4 * i + 4], ARGV[4 * i + 5]
  local last = redis.call('HGET', relayed, source)
  if last and tonumber(last) >= tonumber(seq) then
    ids[i] = false
  else
    local id = redis.call('XADD', stream, '*', 'src', source, 'seq', seq, 'e', event)
    redis.call('HSET', relayed, source, seq)
    redis.call('XADD', KEYS[1], '*', 'r', rundown, 'id', id, 'k', kind)
    ids[i] = id
    if not touched[stream] then
      touched[stream] = relayed
      order[#order + 1] = stream
    end
  end
end
local now = redis.call('TIME')
local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[3])
local ttl = tonumber(ARGV[5])
for _, stream in ipairs(order) do
  trim(stream, tonumber(ARGV[2]), cutoffMs, touched[stream])
  if ttl > 0 then
    redis.call('PEXPIRE', stream, ttl)
    redis.call('PEXPIRE', touched[stream], ttl)
  end
end
if #order > 0 then trim(KEYS[1], tonumber(ARGV[4]), cutoffMs, nil) end
return ids
`;
