//! The Lua scripts of conversations: each write is one of them, or one
//! plain command, so one round trip whatever the conversation's length; a
//! page of items is read in pieces, each one script of bounded work, so
//! that no conversation's length holds the server (which runs one script
//! at a time, for every tenant) for longer than one piece.
//!
//! Every script takes a conversation's three keys (see `keys.rs`) as
//! `KEYS`, in this order: the record (a hash: `v`, `created_at`,
//! `metadata`, and `g`), the order (a list of item ids, oldest first) and
//! the items (a hash: item id → item). The record says whether the
//! conversation exists; the other two are absent while it has no items.
//! `g`, the generation, changes with every write that moves items in the
//! order or replaces them (creating, deleting an item): a read in pieces
//! that began before such a write finds it changed, and starts again,
//! rather than skipping or repeating an item. Appending moves no item, and
//! a read that began before it stops where the conversation then ended.
//!
//! Writes set the TTL on all three keys, so they expire together; reads
//! renew nothing. Items are written and read 256 or 512 at a time
//! (`HMGET`, `HSET`, `RPUSH`), within Lua's bound on a call's arguments.
//! A write that may grow memory has no flags, so that Redis refuses it for
//! want of memory before it runs rather than between its writes; deleting
//! is allowed even then (`allow-oom`).

use super::super::scripts::Lua;

/// What the writes that take the TTL first share: the keys, the TTL, and
/// how to renew the keys and add items.
macro_rules! writes {
    () => {
        r"
local record, order, items = KEYS[1], KEYS[2], KEYS[3]
local ttl = ARGV[1]

local function expire()
  redis.call('EXPIRE', record, ttl)
  redis.call('EXPIRE', order, ttl)
  redis.call('EXPIRE', items, ttl)
end

-- Gives the record a generation no earlier one had: one more than
-- `previous` (a generation, or false), with the server's time, so that a
-- conversation deleted and made again does not start from a number a read
-- still holds.
local function moved(previous)
  local count = tonumber(string.match(previous or '', '^(%d+)-')) or 0
  local now = redis.call('TIME')
  redis.call('HSET', record, 'g', (count + 1) .. '-' .. now[1] .. '-' .. now[2])
end

-- Adds the items of ARGV from `from` on (item id, item, in pairs) at the
-- end, but for those whose id the conversation holds already (the first of
-- a repeated id is kept).
local function add(from)
  local taken = {}
  for first = from, #ARGV - 1, 512 do
    local ids = {}
    for i = first, math.min(first + 510, #ARGV - 1), 2 do ids[#ids + 1] = ARGV[i] end
    local held = redis.call('HMGET', items, unpack(ids))
    local fresh, fields = {}, {}
    for j = 1, #ids do
      local id = ids[j]
      if not held[j] and not taken[id] then
        taken[id] = true
        fresh[#fresh + 1] = id
        fields[#fields + 1] = id
        fields[#fields + 1] = ARGV[first + 2 * j - 1]
      end
    end
    if #fresh > 0 then
      redis.call('HSET', items, unpack(fields))
      redis.call('RPUSH', order, unpack(fresh))
    end
  end
end
"
    };
}

/// The reply of a write that found the conversation: its record's values.
macro_rules! record {
    () => {
        "return redis.call('HMGET', record, 'v', 'created_at', 'metadata')\n"
    };
}

/// Creates a conversation, replacing one with its id: 1.
///
/// `ARGV`: the TTL in seconds, the layout version, `created_at`, the
/// metadata, then item ids and items in pairs.
const CREATE: &str = concat!(
    "#!lua\n",
    writes!(),
    r"
local previous = redis.call('HGET', record, 'g')
redis.call('DEL', record, order, items)
redis.call('HSET', record, 'v', ARGV[2], 'created_at', ARGV[3], 'metadata', ARGV[4])
moved(previous)
add(5)
expire()
return 1
"
);

/// Replaces a conversation's metadata: nil if there is no conversation,
/// else its record's values (`v`, `created_at`, `metadata`).
///
/// `ARGV`: the TTL in seconds, the metadata.
const UPDATE: &str = concat!(
    "#!lua\n",
    writes!(),
    r"
if redis.call('EXISTS', record) == 0 then return false end
redis.call('HSET', record, 'metadata', ARGV[2])
expire()
",
    record!()
);

/// Adds items at the end of a conversation: 0 if there is no conversation,
/// else 1.
///
/// `ARGV`: the TTL in seconds, then item ids and items in pairs.
const APPEND: &str = concat!(
    "#!lua\n",
    writes!(),
    r"
if redis.call('EXISTS', record) == 0 then return 0 end
add(2)
expire()
return 1
"
);

/// Deletes one item: nil if there is no conversation, an empty array if it
/// has no such item, else the record's values (`v`, `created_at`,
/// `metadata`).
///
/// `ARGV`: the TTL in seconds, the item id.
const DELETE_ITEM: &str = concat!(
    "#!lua flags=allow-oom\n",
    writes!(),
    r"
if redis.call('EXISTS', record) == 0 then return false end
if redis.call('HDEL', items, ARGV[2]) == 0 then return {} end
redis.call('LREM', order, 1, ARGV[2])
moved(redis.call('HGET', record, 'g'))
expire()
",
    record!()
);

/// Deletes a conversation and its items: 1 if it existed, else 0.
const DELETE: &str = r"#!lua flags=allow-oom
local existed = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return existed
";

/// Reads one piece of a page of items: at most `max_items` items, and no
/// more once they reach `max_bytes` (at least one item), so that the script
/// does bounded work whatever the conversation's length.
///
/// The first piece (`ARGV[1]` is `-`) finds the page: nil if there is no
/// conversation, `{'n'}` if the item to list after is not in it. Each later
/// piece names the generation the first one answered and where to go on:
/// `{'c'}` if the conversation is gone or its generation changed since.
/// Otherwise the reply is `'m'` (more items follow the page) or `'e'` (none
/// do), or `-` for a later piece; the generation; the position of the next
/// piece's first item, or `-` when the page is read; the position of the
/// page's last item; then the piece's item ids and items in pairs, in the
/// page's order. An id without its item is a `CORRUPT` error.
///
/// `ARGV`: `-`, then `+` and the id of the item to list after, or `-`, and
/// the most items to list (a whole number); or the generation, the next
/// position and the last one. Then `a` (oldest first) or `d` (newest
/// first), `max_items` and `max_bytes`.
const LIST: &str = r"#!lua flags=no-writes
local record, order, items = KEYS[1], KEYS[2], KEYS[3]
local descending = ARGV[4] == 'd'
local max_items, max_bytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local exists = redis.call('EXISTS', record) == 1
local generation = 'g' .. (redis.call('HGET', record, 'g') or '')

-- The page's positions still to read, in the page's order: from next to
-- last.
local marker, next, last
if ARGV[1] == '-' then
  if not exists then return false end
  local after, limit = ARGV[2], tonumber(ARGV[3])
  -- The positions the page takes from, oldest first: low..high.
  local low, high = 0, redis.call('LLEN', order) - 1
  if after ~= '-' then
    local at = redis.call('LPOS', order, string.sub(after, 2))
    if not at then return {'n'} end
    if descending then high = at - 1 else low = at + 1 end
  end
  local available = math.max(high - low + 1, 0)
  local take = math.min(limit, available)
  marker = available > take and 'm' or 'e'
  if take < 1 then return {marker, generation, '-', '-'} end
  if descending then next, last = high, high - take + 1 else next, last = low, low + take - 1 end
else
  if not exists or generation ~= ARGV[1] then return {'c'} end
  marker, next, last = '-', tonumber(ARGV[2]), tonumber(ARGV[3])
end

local count = math.min(max_items, math.abs(last - next) + 1)
local ids
if descending then
  ids = redis.call('LRANGE', order, next - count + 1, next)
  local n = #ids
  for j = 1, math.floor(n / 2) do ids[j], ids[n + 1 - j] = ids[n + 1 - j], ids[j] end
else
  ids = redis.call('LRANGE', order, next, next + count - 1)
end
-- Fewer ids than the positions asked for: written by a writer that keeps
-- no generation. Read again from the start.
if #ids ~= count then return {'c'} end

-- The items whose bytes the piece takes: those up to max_bytes, at least one.
local taken, bytes = 0, 0
while taken < #ids and (taken == 0 or bytes < max_bytes) do
  taken = taken + 1
  bytes = bytes + redis.call('HSTRLEN', items, ids[taken])
end
if descending then next = next - taken else next = next + taken end
local done = (descending and next < last) or (not descending and next > last)
local reply = {marker, generation, done and '-' or tostring(next), tostring(last)}
for start = 1, taken, 512 do
  local batch = {}
  for j = start, math.min(start + 511, taken) do batch[#batch + 1] = ids[j] end
  local bodies = redis.call('HMGET', items, unpack(batch))
  for j = 1, #batch do
    if not bodies[j] then
      return redis.error_reply('CORRUPT item ' .. batch[j] .. ' is listed but not kept')
    end
    reply[#reply + 1] = batch[j]
    reply[#reply + 1] = bodies[j]
  end
end
return reply
";

/// Reads one item: nil if there is no conversation, an empty array if it
/// has no such item, else the item.
///
/// `ARGV`: the item id.
const ITEM: &str = r"#!lua flags=no-writes
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local item = redis.call('HGET', KEYS[3], ARGV[1])
if not item then return {} end
return {item}
";

/// The conversation scripts, each with its hash.
pub(in crate::redis_store) struct Scripts {
    /// `CREATE`.
    pub(super) create: Lua,
    /// `UPDATE`.
    pub(super) update: Lua,
    /// `DELETE`.
    pub(super) delete: Lua,
    /// `APPEND`.
    pub(super) append: Lua,
    /// `LIST`.
    pub(super) list: Lua,
    /// `ITEM`.
    pub(super) item: Lua,
    /// `DELETE_ITEM`.
    pub(super) delete_item: Lua,
}

impl Scripts {
    /// Every conversation script, hashed once for the store's lifetime.
    pub(in crate::redis_store) fn new() -> Self {
        Self {
            create: Lua::new(CREATE),
            update: Lua::new(UPDATE),
            delete: Lua::new(DELETE),
            append: Lua::new(APPEND),
            list: Lua::new(LIST),
            item: Lua::new(ITEM),
            delete_item: Lua::new(DELETE_ITEM),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_script_starts_with_its_shebang() {
        for (source, flags) in [
            (CREATE, ""),
            (UPDATE, ""),
            (APPEND, ""),
            (DELETE_ITEM, " flags=allow-oom"),
            (DELETE, " flags=allow-oom"),
            (LIST, " flags=no-writes"),
            (ITEM, " flags=no-writes"),
        ] {
            let first = source.lines().next().unwrap_or_default();
            assert_eq!(first, format!("#!lua{flags}"), "{source}");
        }
    }
}
