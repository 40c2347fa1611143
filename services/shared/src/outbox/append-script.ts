/**
 * Appends a batch of relayed events (in seq order) to their rundowns' streams, atomically, each
 * unless its source already relayed that seq (or a later one) for the rundown: a repeated append is
 * a no-op, so re-relaying after a crash can never duplicate an event. Then, per rundown appended to:
 * its relayed mark once, one index entry for its run of events (the run's last entry id and the
 * kinds it holds: a follower learns "this rundown has news of these kinds up to here" once, not
 * once per event of a 500-cell bulk), one trim and one expiry refresh; and the index is trimmed once.
 *
 * KEYS: 1 index stream, then per rundown of the batch (its slot, from 1): rundown stream, relayed hash
 * ARGV: 1 source, 2 max length, 3 max age ms, 4 index max length, 5 idle ttl ms (0: none),
 *       6 a group of numbers per event, in order: "<slot> <seq> <kind> <length>;" (kind: the Kind enum's number),
 *       7 the encoded events one after another (each <length> bytes), then per slot: rundown id
 * Returns, per event, the new entry id or false when it was a repeat.
 *
 * One call per batch rather than one per event: per event, the call's own cost (arguments,
 * script lookup, reply) was a share of a bulk write's relay comparable to the appends themselves.
 * The events as one argument and their numbers as one group each, rather than four arguments and
 * two keys per event: the client's cost of sizing and copying thousands of arguments went too.
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
local events = ARGV[7]
local ids = {}
-- Per slot: the last seq relayed (read once, then as appended), and the run appended for it.
local last = {}
local runs = {}
local order = {}
local at = 1
for slot, seq, kind, length in string.gmatch(ARGV[6], '(%d+) (%d+) (%d+) (%d+);') do
  slot = tonumber(slot)
  local event = string.sub(events, at, at + tonumber(length) - 1)
  at = at + tonumber(length)
  if last[slot] == nil then last[slot] = tonumber(redis.call('HGET', KEYS[2 * slot + 1], source) or '0') end
  if last[slot] >= tonumber(seq) then
    ids[#ids + 1] = false
  else
    local id = redis.call('XADD', KEYS[2 * slot], '*', 'src', source, 'seq', seq, 'e', event)
    last[slot] = tonumber(seq)
    ids[#ids + 1] = id
    local run = runs[slot]
    if not run then
      run = { seen = {}, kinds = {} }
      runs[slot] = run
      order[#order + 1] = slot
    end
    run.id, run.seq = id, seq
    if not run.seen[kind] then
      run.seen[kind] = true
      run.kinds[#run.kinds + 1] = kind
    end
  end
end
-- Per rundown appended to: its mark once, and one index entry for the run (its last id, its kinds).
for _, slot in ipairs(order) do
  local run = runs[slot]
  redis.call('HSET', KEYS[2 * slot + 1], source, run.seq)
  redis.call('XADD', KEYS[1], '*', 'r', ARGV[7 + slot], 'id', run.id, 'k', table.concat(run.kinds, ','))
end
local now = redis.call('TIME')
local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[3])
local ttl = tonumber(ARGV[5])
for _, slot in ipairs(order) do
  trim(KEYS[2 * slot], tonumber(ARGV[2]), cutoffMs, KEYS[2 * slot + 1])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[2 * slot], ttl)
    redis.call('PEXPIRE', KEYS[2 * slot + 1], ttl)
  end
end
if #order > 0 then trim(KEYS[1], tonumber(ARGV[4]), cutoffMs, nil) end
return ids
`;
