//! The script that walks a chain one piece at a time (the layout it reads
//! is described in `../scripts.rs`); the chain's turns are then read with
//! plain `HMGET`s (see `../chain.rs`).
//!
//! Redis runs one script at a time for every tenant of the server, so no
//! piece does work that grows with the chain: each walks at most a bounded
//! number of slots and runs. A piece is of one of two kinds:
//!
//! - `first`: finds the response, its conversation and generation, which
//!   of the first slots the reader keeps (as the `known` arguments name
//!   them), then walks the chain's runs from the response back, newest
//!   first, sending the id of each slot not kept and the size of its turn.
//!   When the walk ends in this piece, the turns of the chain's first
//!   slots follow, oldest first, as many as a bound on their bytes lets
//!   it copy (perhaps none): a short chain is one piece.
//! - `walk`: goes on walking from where the last piece stopped, once it
//!   checked that the conversation is still there at the generation the
//!   first piece saw (it changes whenever a slot does, see
//!   `../scripts.rs`): else it answers `{'c'}` and the reader starts again.
//!
//! A piece answers, in order: a head, `"<conversation> <generation> <kept>
//! <segments> <turns>"`; where the walk stands, `"<at> <start> <pos>"`
//! (the next slot to read, descending, and the run holding it), or `''`
//! once it ended; the run's `up` then the id expected in its last slot,
//! or once it ended the nearest ancestor kept elsewhere (or `''`) and
//! `''`; then each segment, `"<start> <pos> <from> <count>"` (a run, and
//! how many of its slots follow, from `from` down), followed by a value
//! `"<size> <id>"` for each of those slots (the bytes of its turn, 0 when
//! gone, and its id); then the turns (false when gone). A place that
//! cannot be read is a `CORRUPT` error.
//!
//! `KEYS`: the index. `ARGV`: the conversation key stem, the most slots a
//! piece walks, the bytes of ids after which it stops, the most bytes of
//! turns a first piece copies, the kind of piece, the id asked for, then:
//! - `first`: for each conversation the reader keeps a part of, its
//!   number, generation, how many of its first slots it keeps, and the id
//!   in the last of them;
//! - `walk`: the conversation, the generation, the slots kept, then where
//!   the walk stands: `at`, `start`, `pos`, `up` and the id expected.

/// The source; see the module's documentation.
pub(super) const CHAIN: &str = r"#!lua flags=no-writes
local index, stem = KEYS[1], ARGV[1]
local max_ids, max_bytes, max_turn_bytes = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local kind, id = ARGV[5], ARGV[6]

local function corrupt(at)
  return redis.error_reply('CORRUPT the conversation of response ' .. id ..
    ' cannot be read at response ' .. at)
end

local function place(value)
  local pos, start, up = string.match(value, '^(%d+) (%d+) (.*)$')
  if not pos then return nil end
  pos, start = tonumber(pos), tonumber(start)
  if start > pos then return nil end
  return pos, start, up
end

local conversation, key, generation
if kind == 'first' then
  conversation = redis.call('HGET', index, 'i:' .. id)
  if not conversation then return false end
  key = stem .. conversation
  generation = redis.call('HGET', key, 'g') or ''
else
  conversation, generation = ARGV[7], ARGV[8]
  key = stem .. conversation
  -- Gone (expired) or changed since the first piece: read it again.
  if redis.call('EXISTS', key) == 0 or (redis.call('HGET', key, 'g') or '') ~= generation then
    return {'c'}
  end
end

local kept, at, start, pos, up, expected
if kind == 'first' then
  local own = redis.call('HGET', key, 'n:' .. id)
  if not own then return false end
  kept = 0
  for i = 7, #ARGV - 3, 4 do
    if generation ~= '' and ARGV[i] == conversation and ARGV[i + 1] == generation then
      local slots = tonumber(ARGV[i + 2]) or 0
      -- Its last kept slot still holds the same response: a server that
      -- lost writes (a restart, a failover) and gave the slots out again
      -- holds another there, or none.
      if slots > 0 and redis.call('HGET', key, 'i:' .. (slots - 1)) == ARGV[i + 3] then
        kept = slots
      end
    end
  end
  pos, start, up = place(own)
  if not pos then return corrupt(id) end
  -- Without its own turn (unless the reader keeps it) there is no chain.
  if pos >= kept and redis.call('HEXISTS', key, 't:' .. pos) == 0 then return false end
  at, expected = pos, id
else
  kept, at = tonumber(ARGV[9]), tonumber(ARGV[10])
  start, pos = tonumber(ARGV[11]), tonumber(ARGV[12])
  up, expected = ARGV[13], ARGV[14]
end

-- The walk, newest run first: the ids of each run's slots not kept, from
-- its last down, until the ids or the bytes run out.
local walked, bytes = 0, 0
local values = {}
local sizes = {}
local segments = 0
local runs = {}
local done, lead = false, ''
while true do
  local low = math.max(start, kept)
  local from, sent, head = at, 0, #values + 1
  values[head] = ''
  while at >= low and walked < max_ids and bytes < max_bytes do
    local last = math.max(low, at - (max_ids - walked) + 1)
    local fields = {}
    for p = at, last, -1 do fields[#fields + 1] = 'i:' .. p end
    local got = redis.call('HMGET', key, unpack(fields))
    for j = 1, #fields do
      local slot = at - j + 1
      if not got[j] then return corrupt(expected) end
      if slot == pos and got[j] ~= expected then return corrupt(expected) end
      local size = redis.call('HSTRLEN', key, 't:' .. slot)
      sizes[slot] = size
      values[#values + 1] = size .. ' ' .. got[j]
      bytes = bytes + #got[j]
    end
    sent, walked, at = sent + #fields, walked + #fields, last - 1
  end
  values[head] = start .. ' ' .. pos .. ' ' .. from .. ' ' .. sent
  segments = segments + 1
  runs[#runs + 1] = {start, pos}
  if at >= low then break end
  if up == '-' then
    done = true
    break
  end
  local parent = string.sub(up, 2)
  local value = redis.call('HGET', key, 'n:' .. parent)
  local ppos, pstart, pup
  if value then ppos, pstart, pup = place(value) end
  walked = walked + 1
  -- A parent kept elsewhere, or placed after its child, is not this one.
  if not ppos or ppos >= start then
    lead = parent
    done = true
    break
  end
  pos, start, up, expected, at = ppos, pstart, pup, parent, ppos
  if walked >= max_ids or bytes >= max_bytes then break end
end

-- A first piece that walked the whole chain copies its first turns too,
-- while their bytes fit: a short chain is one piece. Copying a turn
-- through a script costs Redis several times what a plain `HMGET` does.
local tail = {}
if kind == 'first' and done then
  local fields, copied, full = {}, 0, false
  for r = #runs, 1, -1 do
    for p = math.max(runs[r][1], kept), runs[r][2] do
      if copied + sizes[p] > max_turn_bytes then
        full = true
        break
      end
      copied = copied + sizes[p]
      fields[#fields + 1] = 't:' .. p
    end
    if full then break end
  end
  if #fields > 0 then tail = redis.call('HMGET', key, unpack(fields)) end
end
local taken = #tail

local reply
if done then
  reply = {'', '', lead, ''}
else
  reply = {'', at .. ' ' .. start .. ' ' .. pos, up, expected}
end
reply[1] = conversation .. ' ' .. generation .. ' ' .. kept .. ' ' .. segments .. ' ' .. taken
for i = 1, #values do reply[#reply + 1] = values[i] end
for i = 1, taken do reply[#reply + 1] = tail[i] end
return reply
";
