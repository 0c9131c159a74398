//! The Lua scripts that make every store operation one round trip, and a
//! save the same work at any depth (those of `/v1/conversations` are in
//! `conversations/scripts.rs`; the one that walks a chain, a piece at a
//! time, is in `chain/script.rs`).
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
//! (a branch) starts a run of its own. Reading a conversation is then a
//! walk of its runs, `HMGET`s of ids by position, then `HMGET`s of turns,
//! in pieces of bounded size (see `chain.rs`). A
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

    /// `source`, with its SHA-1: for the scripts of other modules
    /// (conversations, chains).
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
