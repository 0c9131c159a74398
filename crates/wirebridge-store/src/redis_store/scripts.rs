//! The Lua scripts that make every store operation one round trip, and a
//! save the same work at any depth (those of `/v1/conversations` are in
//! `conversations/scripts.rs`).
//!
//! The layout they share, per tenant (see `keys.rs`):
//!
//! - the index, a hash: `i:<id>` → the number of the conversation holding
//!   response `<id>`; `#` → the last conversation number given out; `@` →
//!   where the sweep of stale entries stands (an `HSCAN` cursor).
//! - one hash per conversation, `…:c:<n>`, of slots numbered from 0 in the
//!   order responses were saved: `#` → how many slots it has; `i:<pos>` →
//!   the id saved in slot `<pos>`; `t:<pos>` → its turn and `r:<pos>` → its
//!   envelope, both gone once the response is (deleted, or saved again
//!   elsewhere); `n:<id>` → the place of `<id>`'s latest save, `"<pos>
//!   <start> <up>"`; `g` → its generation, which changes whenever a slot
//!   does (a response saved again or deleted) but not when one is added,
//!   so that a reader that keeps slots knows they are still what Redis
//!   has. Each generation is one the bridge made for the change, unique
//!   (see `kept.rs`), so a hash made again after expiring has another.
//!
//! Slots `start..=pos` hold a response's latest ancestors and itself, in
//! order (a run: each the parent of the next), and `up` is the parent of the
//! first of them: `+<id>`, or `-` when it has none. A response whose parent
//! is its conversation's last slot extends the parent's run; any other
//! (a branch) starts a run of its own. Reading a conversation is then one
//! `HMGET` of ids per run, and one of turns, by position, per 512 turns. A
//! response whose parent the tenant does not have starts a new
//! conversation, with that parent as its `up`, named missing when read.
//!
//! A conversation expires as a whole: a save renews its hash and the index,
//! two `EXPIRE`s whatever the depth. Deleting a response removes its index
//! entry and its slot's turn and envelope, leaving the slot's id and its
//! place, so that the chains through it name it missing (even if its id is
//! saved again, in another slot). Index entries whose conversation has
//! expired are dropped by a sweep that each save advances by a few entries.
//!
//! Every key a script touches shares the tenant's hash tag, so each runs on
//! one Redis Cluster node. Each starts with a `#!lua` line: Redis then
//! checks for memory before a writing script runs rather than between its
//! writes, so a save refused for memory writes nothing; deleting is allowed
//! even then, as `DEL` is.

use redis::{Cmd, Script};

/// Saves a response, replacing an earlier save of its id. Answers where it
/// went, in one value (each value of a reply costs the client more than
/// its bytes): its conversation's number, its slot, and the
/// conversation's generation after the save, separated by spaces.
///
/// `KEYS`: the index. `ARGV`: the TTL in seconds, the id, the parent (`+`
/// and its id, or `-`), the turn, the envelope, the tenant's conversation
/// key stem, a new generation.
const SAVE: &str = r"#!lua
local index = KEYS[1]
local ttl = tonumber(ARGV[1])
local id, parent, turn, envelope, stem = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local generation = ARGV[7]

-- A slot changed: what readers keep of the conversation is stale.
local function changed(key)
  redis.call('HSET', key, 'g', generation)
end

local function place(conversation, rid)
  local value = redis.call('HGET', stem .. conversation, 'n:' .. rid)
  if not value then return nil end
  local pos, start, up = string.match(value, '^(%d+) (%d+) (.*)$')
  if not pos then return nil end
  return tonumber(pos), tonumber(start), up
end

-- The conversation of a response the tenant has, and its place there.
local function find(rid)
  local conversation = redis.call('HGET', index, 'i:' .. rid)
  if not conversation then return nil end
  local pos, start, up = place(conversation, rid)
  if not pos then return nil end
  if redis.call('HEXISTS', stem .. conversation, 't:' .. pos) == 0 then return nil end
  return conversation, pos, start, up
end

local function renew(key)
  if redis.call('TTL', key) < ttl then redis.call('EXPIRE', key, ttl) end
end

local pconversation, ppos, pstart, pup
if parent ~= '-' then
  pconversation, ppos, pstart, pup = find(string.sub(parent, 2))
end

-- An earlier save of this id is replaced where it is when it continues the
-- same parent from the same place; else it goes, leaving its slot.
local oconversation, opos, ostart, oup = find(id)
if oconversation then
  local okey = stem .. oconversation
  local oparent, oparent_pos = oup, nil
  if opos > ostart then
    oparent = '+' .. (redis.call('HGET', okey, 'i:' .. (opos - 1)) or '')
    oparent_pos = opos - 1
  elseif oup ~= '-' then
    oparent_pos = place(oconversation, string.sub(oup, 2))
  end
  local same = oparent == parent and
    (not pconversation or (pconversation == oconversation and ppos == oparent_pos))
  if same then
    redis.call('HSET', okey, 't:' .. opos, turn, 'r:' .. opos, envelope)
    changed(okey)
    renew(okey)
    renew(index)
    return oconversation .. ' ' .. opos .. ' ' .. redis.call('HGET', okey, 'g')
  end
  redis.call('HDEL', okey, 't:' .. opos, 'r:' .. opos)
  changed(okey)
  redis.call('HDEL', index, 'i:' .. id)
end

local conversation, pos, start, up
if pconversation then
  conversation = pconversation
  pos = redis.call('HINCRBY', stem .. conversation, '#', 1) - 1
  if ppos == pos - 1 then
    start, up = pstart, pup
  else
    start, up = pos, parent
  end
else
  -- A new conversation, under a number no live one has.
  conversation = redis.call('HINCRBY', index, '#', 1)
  while redis.call('EXISTS', stem .. conversation) == 1 do
    conversation = redis.call('HINCRBY', index, '#', 1)
  end
  redis.call('HSET', stem .. conversation, '#', 1)
  pos, start, up = 0, 0, parent
end
local key = stem .. conversation
if redis.call('HEXISTS', key, 'g') == 0 then
  -- A new conversation, or one saved before generations were kept.
  changed(key)
end
redis.call('HSET', key, 'i:' .. pos, id, 't:' .. pos, turn, 'r:' .. pos, envelope,
  'n:' .. id, pos .. ' ' .. start .. ' ' .. up)
redis.call('HSET', index, 'i:' .. id, conversation)
renew(key)
renew(index)

-- A few more index entries swept: those of expired conversations go.
local scan = redis.call('HSCAN', index, redis.call('HGET', index, '@') or '0', 'COUNT', 8)
local alive = {}
local fields = scan[2]
for i = 1, #fields, 2 do
  local field, value = fields[i], fields[i + 1]
  if string.sub(field, 1, 2) == 'i:' then
    local live = alive[value]
    if live == nil then
      live = redis.call('EXISTS', stem .. value) == 1
      alive[value] = live
    end
    if not live then redis.call('HDEL', index, field) end
  end
end
redis.call('HSET', index, '@', scan[1])
return conversation .. ' ' .. pos .. ' ' .. redis.call('HGET', key, 'g')
";

/// Reads a response: nil if the tenant does not have it, else its envelope
/// and turn (either nil if gone).
///
/// `KEYS`: the index. `ARGV`: the id, the conversation key stem.
const GET: &str = r"#!lua flags=no-writes
local conversation = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if not conversation then return false end
local key = ARGV[2] .. conversation
local place = redis.call('HGET', key, 'n:' .. ARGV[1])
local pos = place and string.match(place, '^(%d+) ')
if not pos then return false end
return redis.call('HMGET', key, 'r:' .. pos, 't:' .. pos)
";

/// Deletes a response: how many of its values were there (0: it was not).
///
/// `KEYS`: the index. `ARGV`: the id, the conversation key stem, a new
/// generation.
const DELETE: &str = r"#!lua flags=allow-oom
local conversation = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if not conversation then return 0 end
redis.call('HDEL', KEYS[1], 'i:' .. ARGV[1])
local key = ARGV[2] .. conversation
local place = redis.call('HGET', key, 'n:' .. ARGV[1])
local pos = place and string.match(place, '^(%d+) ')
if not pos then return 0 end
local removed = redis.call('HDEL', key, 't:' .. pos, 'r:' .. pos)
if removed > 0 then
  -- Readers that keep this slot must read it again.
  redis.call('HSET', key, 'g', ARGV[3])
end
return removed
";

/// Reads the turns of responses by id, in order, nil for those the tenant
/// does not have.
///
/// `KEYS`: the index. `ARGV`: the conversation key stem, then the ids.
const TURNS: &str = r"#!lua flags=no-writes
local reply = {}
for i = 2, #ARGV do
  local turn = false
  local conversation = redis.call('HGET', KEYS[1], 'i:' .. ARGV[i])
  if conversation then
    local key = ARGV[1] .. conversation
    local place = redis.call('HGET', key, 'n:' .. ARGV[i])
    local pos = place and string.match(place, '^(%d+) ')
    if pos then turn = redis.call('HGET', key, 't:' .. pos) end
  end
  reply[i - 1] = turn
end
return reply
";

/// Reads a conversation: nil if the tenant does not have the response or
/// its own turn, else a head, in one value separated by spaces: the
/// conversation's number and generation, how many of its first slots the
/// reply leaves out (those the reader keeps, when the generation it kept
/// them at is the conversation's: else none), the number of runs of slots
/// the chain goes through, and each run's first and last slot, oldest run
/// first. Then the nearest ancestor kept elsewhere (or `''`), the id of
/// each slot of the chain not left out, oldest first, and the turn of
/// each (false when gone). A place that cannot be read is a `CORRUPT`
/// error.
///
/// `KEYS`: the index. `ARGV`: the conversation key stem, the id, then for
/// each conversation the reader keeps a part of, its number, generation,
/// how many of its first slots the reader keeps, and the id in the last of
/// them.
const CHAIN: &str = r"#!lua flags=no-writes
local index, stem, id = KEYS[1], ARGV[1], ARGV[2]
local conversation = redis.call('HGET', index, 'i:' .. id)
if not conversation then return false end
local key = stem .. conversation
local own = redis.call('HGET', key, 'n:' .. id)
if not own then return false end
local generation = redis.call('HGET', key, 'g') or ''
local kept = 0
for i = 3, #ARGV - 3, 4 do
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

local function place(value)
  local pos, start, up = string.match(value, '^(%d+) (%d+) (.*)$')
  if not pos then return nil end
  pos, start = tonumber(pos), tonumber(start)
  if start > pos then return nil end
  return pos, start, up
end

local function corrupt(at)
  return redis.error_reply('CORRUPT the conversation of response ' .. id ..
    ' cannot be read at response ' .. at)
end

-- The runs of ancestors, newest first: a first and last slot, and the ids
-- of the slots not kept by the reader.
local pos, start, up = place(own)
if not pos then return corrupt(id) end
local expected = id
local runs = {}
local lead = ''
while true do
  local ids = {}
  for first = math.max(start, kept), pos, 512 do
    local fields = {}
    for p = first, math.min(first + 511, pos) do fields[#fields + 1] = 'i:' .. p end
    local got = redis.call('HMGET', key, unpack(fields))
    for j = 1, #got do
      if not got[j] then return corrupt(expected) end
      ids[#ids + 1] = got[j]
    end
  end
  if #ids > 0 and ids[#ids] ~= expected then return corrupt(expected) end
  runs[#runs + 1] = {start, pos, ids}
  if up == '-' then break end
  local parent = string.sub(up, 2)
  local value = redis.call('HGET', key, 'n:' .. parent)
  local ppos, pstart, pup
  if value then ppos, pstart, pup = place(value) end
  -- A parent kept elsewhere, or placed after its child, is not this one.
  if not ppos or ppos >= start then
    lead = parent
    break
  end
  pos, start, up, expected = ppos, pstart, pup, parent
end

local head = {conversation, generation, kept, #runs}
local slots = {}
for r = #runs, 1, -1 do
  local first, last = runs[r][1], runs[r][2]
  head[#head + 1] = first
  head[#head + 1] = last
  for p = math.max(first, kept), last do slots[#slots + 1] = p end
end
local reply = {table.concat(head, ' '), lead}
for r = #runs, 1, -1 do
  for _, rid in ipairs(runs[r][3]) do reply[#reply + 1] = rid end
end
for i = 1, #slots, 512 do
  local fields = {}
  for j = i, math.min(i + 511, #slots) do fields[#fields + 1] = 't:' .. slots[j] end
  local turns = redis.call('HMGET', key, unpack(fields))
  for j = 1, #fields do reply[#reply + 1] = turns[j] end
end
if runs[1][2] >= kept and not reply[#reply] then return false end
return reply
";

/// A script with its SHA-1, run by `EVALSHA` (and by `EVAL` when the server
/// does not have it yet).
pub(super) struct Lua {
    source: &'static str,
    hash: String,
}

impl Lua {
    pub(super) fn save() -> Self {
        Self::new(SAVE)
    }

    pub(super) fn get() -> Self {
        Self::new(GET)
    }

    pub(super) fn delete() -> Self {
        Self::new(DELETE)
    }

    pub(super) fn turns() -> Self {
        Self::new(TURNS)
    }

    pub(super) fn chain() -> Self {
        Self::new(CHAIN)
    }

    /// `source`, with its SHA-1: for the scripts of other modules
    /// (conversations).
    pub(super) fn new(source: &'static str) -> Self {
        Self {
            source,
            hash: Script::new(source).get_hash().to_owned(),
        }
    }

    /// `EVALSHA` of the script with `keys` and `args`.
    pub(super) fn by_hash(&self, keys: &[String], args: &[&[u8]]) -> Cmd {
        self.call("EVALSHA", self.hash.as_str(), keys, args)
    }

    /// `EVAL` of the script with `keys` and `args`, which also has the
    /// server keep it for `EVALSHA`.
    pub(super) fn by_source(&self, keys: &[String], args: &[&[u8]]) -> Cmd {
        self.call("EVAL", self.source, keys, args)
    }

    fn call(&self, command: &str, script: &str, keys: &[String], args: &[&[u8]]) -> Cmd {
        let mut cmd = redis::cmd(command);
        cmd.arg(script).arg(keys.len()).arg(keys);
        for arg in args {
            cmd.arg(*arg);
        }
        cmd
    }
}
