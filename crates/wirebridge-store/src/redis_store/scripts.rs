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
//!   <start> <up>"`.
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

/// Saves a response, replacing an earlier save of its id.
///
/// `KEYS`: the index. `ARGV`: the TTL in seconds, the id, the parent (`+`
/// and its id, or `-`), the turn, the envelope, the tenant's conversation
/// key stem.
const SAVE: &str = r"#!lua
local index = KEYS[1]
local ttl = tonumber(ARGV[1])
local id, parent, turn, envelope, stem = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

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
    renew(okey)
    renew(index)
    return 1
  end
  redis.call('HDEL', okey, 't:' .. opos, 'r:' .. opos)
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
return 1
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
/// `KEYS`: the index. `ARGV`: the id, the conversation key stem.
const DELETE: &str = r"#!lua flags=allow-oom
local conversation = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if not conversation then return 0 end
redis.call('HDEL', KEYS[1], 'i:' .. ARGV[1])
local key = ARGV[2] .. conversation
local place = redis.call('HGET', key, 'n:' .. ARGV[1])
local pos = place and string.match(place, '^(%d+) ')
if not pos then return 0 end
return redis.call('HDEL', key, 't:' .. pos, 'r:' .. pos)
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

/// Reads a conversation: nil if the tenant does not have the response,
/// else the number of ids (as text), the ids oldest first (the nearest
/// missing one included), then the turns after the nearest missing one,
/// oldest first, the response's own last. A place that cannot be read is a
/// `CORRUPT` error.
///
/// `KEYS`: the index. `ARGV`: the conversation key stem, the id.
const CHAIN: &str = r"#!lua flags=no-writes
local index, stem, id = KEYS[1], ARGV[1], ARGV[2]
local conversation = redis.call('HGET', index, 'i:' .. id)
if not conversation then return false end
local key = stem .. conversation
local own = redis.call('HGET', key, 'n:' .. id)
if not own then return false end

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

-- The runs of ancestors, newest first, each a first slot and its ids.
local pos, start, up = place(own)
if not pos then return corrupt(id) end
local expected = id
local runs = {}
local lead = nil
while true do
  local ids = {}
  for first = start, pos, 512 do
    local fields = {}
    for p = first, math.min(first + 511, pos) do fields[#fields + 1] = 'i:' .. p end
    local got = redis.call('HMGET', key, unpack(fields))
    for j = 1, #got do
      if not got[j] then return corrupt(expected) end
      ids[#ids + 1] = got[j]
    end
  end
  if ids[#ids] ~= expected then return corrupt(expected) end
  runs[#runs + 1] = {start, ids}
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

-- The ids oldest first, with the slot of each (none for a lead).
local ids, slots = {}, {}
if lead then ids[1] = lead; slots[1] = false end
for r = #runs, 1, -1 do
  local first, run = runs[r][1], runs[r][2]
  for j = 1, #run do
    ids[#ids + 1] = run[j]
    slots[#slots + 1] = first + j - 1
  end
end

-- Turns from the newest back, up to the nearest missing one.
local turns = {}
local i = #ids
while i >= 1 do
  local low = math.max(1, i - 511)
  local fields = {}
  for j = i, low, -1 do
    if not slots[j] then break end
    fields[#fields + 1] = 't:' .. slots[j]
  end
  local values = {}
  if #fields > 0 then values = redis.call('HMGET', key, unpack(fields)) end
  local found = 0
  for j = 1, #fields do
    if not values[j] then break end
    turns[#turns + 1] = values[j]
    found = found + 1
  end
  if found < i - low + 1 then break end
  i = low - 1
end
if #turns == 0 then return false end

local reply = {tostring(#ids)}
for j = 1, #ids do reply[#reply + 1] = ids[j] end
for j = #turns, 1, -1 do reply[#reply + 1] = turns[j] end
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
