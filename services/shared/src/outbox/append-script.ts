/** Trims a stream (see below); with a mark key, records the newest id it removed (`~trimmed`). */
const TRIM = `
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
`;

/**
 * Appends a run of relayed events of ONE rundown (in seq order) to its stream, atomically, each
 * unless its source already relayed that seq (or a later one) for the rundown: a repeated append is
 * a no-op, so re-relaying after a crash can never duplicate an event. Every key is the rundown's
 * (one hash tag: one Redis Cluster slot). Then: the relayed mark once, one trim, one expiry refresh.
 *
 * The index entry of the run (`events:index`, another slot) is not written here: the script records
 * it as the source's pending index entry (`~ix:<source>` in the relayed hash: "<last id> <kinds>")
 * and returns it; the relay appends it to the index next (indexScript), then commits. A relay that
 * dies in between leaves its outbox rows, so the next relay's re-append (all repeats) returns the
 * pending entry again and it is indexed then: no event goes unindexed, and an index entry may at
 * worst be written twice (followers read streams from their own position: a repeat is a no-op).
 * A run that mixes repeats and new events carries the pending entry's kinds too.
 *
 * When new events were appended, the rundown's fact tokens their kinds may change get a new value
 * (fact-versions.ts), in the same script: no reader sees the event before the token moved.
 *
 * KEYS: 1 rundown stream, 2 relayed hash, 3 layout token, 4 order token
 * ARGV: 1 source, 2 max length, 3 max age ms, 4 idle ttl ms (0: none),
 *       5 a group of numbers per event, in order: "<seq> <kind> <length>;" (kind: the Kind enum's number),
 *       6 the encoded events one after another (each <length> bytes),
 *       7 a new token, 8 the tokens' ttl in seconds, 9 and 10 the kinds (",1,2,") moving layout and order
 * Returns { ids, pending }: per event the new entry id or false when it was a repeat; then the
 * pending index entry "<id> <kinds>" or false (nothing appended now or before).
 *
 * One call per run rather than one per event: per event, the call's own cost (arguments, script
 * lookup, reply) was a share of a bulk write's relay comparable to the appends themselves. The
 * events as one argument and their numbers as one group each: the client's cost of sizing and
 * copying thousands of arguments went too.
 *
 * The relayed hash also holds `~trimmed`: the newest entry id trimming removed (see isContinuous).
 *
 * Trimming keeps every entry that is among the newest `max length` OR younger than `max age`: it
 * removes, oldest first, only entries that are both beyond the count and older than the age (at
 * most 1,000 per stream and call, so the cost is bounded and amortized O(1): every entry scanned is
 * removed, and a call appends at most as many as the relay's batch).
 */
export const appendBatchScript = `
${TRIM}
local source = ARGV[1]
local events = ARGV[6]
local pendingField = '~ix:' .. source
local ids = {}
local last = tonumber(redis.call('HGET', KEYS[2], source) or '0')
local runId, runSeq, repeats = nil, nil, false
local seen, kinds = {}, {}
local at = 1
for seq, kind, length in string.gmatch(ARGV[5], '(%d+) (%d+) (%d+);') do
  local event = string.sub(events, at, at + tonumber(length) - 1)
  at = at + tonumber(length)
  if last >= tonumber(seq) then
    ids[#ids + 1] = false
    repeats = true
  else
    local id = redis.call('XADD', KEYS[1], '*', 'src', source, 'seq', seq, 'e', event)
    last = tonumber(seq)
    ids[#ids + 1] = id
    runId, runSeq = id, seq
    if not seen[kind] then
      seen[kind] = true
      kinds[#kinds + 1] = kind
    end
  end
end
local pending = redis.call('HGET', KEYS[2], pendingField)
if runId then
  -- A re-append (repeats) may follow a relay that died before indexing: keep what it had pending.
  if repeats and pending then
    for kind in string.gmatch(string.match(pending, ' (.*)$') or '', '[^,]+') do
      if not seen[kind] then
        seen[kind] = true
        kinds[#kinds + 1] = kind
      end
    end
  end
  pending = runId .. ' ' .. table.concat(kinds, ',')
  redis.call('HSET', KEYS[2], source, runSeq, pendingField, pending)
  local now = redis.call('TIME')
  local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[3])
  trim(KEYS[1], tonumber(ARGV[2]), cutoffMs, KEYS[2])
  local ttl = tonumber(ARGV[4])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  for fact = 3, 4 do
    for kind in pairs(seen) do
      if string.find(ARGV[fact + 6], ',' .. kind .. ',', 1, true) then
        redis.call('SET', KEYS[fact], ARGV[7], 'EX', ARGV[8])
        break
      end
    end
  end
elseif not repeats then
  pending = false
end
return { ids, pending or false }
`;

/**
 * Appends index entries (`events:index`, its own slot) and trims the index once.
 * KEYS: 1 index stream. ARGV: 1 index max length, 2 max age ms, then per entry: rundown id, "<id> <kinds>".
 */
export const indexScript = `
${TRIM}
local now = redis.call('TIME')
local cutoffMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[2])
for i = 3, #ARGV, 2 do
  local id, kinds = string.match(ARGV[i + 1], '^(%S+) ?(.*)$')
  redis.call('XADD', KEYS[1], '*', 'r', ARGV[i], 'id', id, 'k', kinds)
end
trim(KEYS[1], tonumber(ARGV[1]), cutoffMs, nil)
return 1
`;
