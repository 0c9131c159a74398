//! The two Lua scripts that make a save and a chain read one round trip
//! each, whatever the conversation's depth.
//!
//! Every key a script touches shares the tenant's hash tag, so both run on
//! one Redis Cluster node. Each starts with a `#!lua` line: Redis then
//! checks for memory before a writing script runs rather than between its
//! writes, so a save refused for memory writes nothing.

use redis::{Cmd, Script};

/// Writes the three values of a record with the TTL, and gives the live
/// values of its ancestors the same TTL unless theirs is longer.
///
/// `KEYS`: the envelope, turn and ancestors keys. `ARGV`: the TTL in
/// seconds, the three values, the tenant's key base, then the ancestors'
/// ids.
const SAVE: &str = r"#!lua
local ttl = ARGV[1]
redis.call('SET', KEYS[1], ARGV[2], 'EX', ttl)
redis.call('SET', KEYS[2], ARGV[3], 'EX', ttl)
redis.call('SET', KEYS[3], ARGV[4], 'EX', ttl)
local base = ARGV[5]
for i = 6, #ARGV do
  redis.call('EXPIRE', base .. 'r:' .. ARGV[i], ttl, 'GT')
  redis.call('EXPIRE', base .. 't:' .. ARGV[i], ttl, 'GT')
  redis.call('EXPIRE', base .. 'a:' .. ARGV[i], ttl, 'GT')
end
return 1
";

/// Reads a conversation: nil if the response is gone, else its ancestors
/// value, its own turn, then each ancestor's turn in order (nil where gone).
/// The ancestors are read in batches of 512 so that no command takes more
/// arguments than Lua's stack holds.
///
/// `KEYS`: the ancestors and turn keys of the response. `ARGV`: the tenant's
/// turn key stem.
const CHAIN: &str = r"#!lua flags=no-writes
local ancestors = redis.call('GET', KEYS[1])
if not ancestors then return false end
local own = redis.call('GET', KEYS[2])
if not own then return false end
local reply = {ancestors, own}
local ok, ids = pcall(cjson.decode, ancestors)
if not ok or type(ids) ~= 'table' then return reply end
local batch = {}
for i = 1, #ids do
  batch[#batch + 1] = ARGV[1] .. tostring(ids[i])
  if #batch == 512 or i == #ids then
    local values = redis.call('MGET', unpack(batch))
    for j = 1, #batch do reply[#reply + 1] = values[j] end
    batch = {}
  end
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

    pub(super) fn chain() -> Self {
        Self::new(CHAIN)
    }

    fn new(source: &'static str) -> Self {
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
