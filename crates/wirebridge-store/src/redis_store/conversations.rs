//! Conversations (`/v1/conversations`) on Redis: each one three keys of its
//! tenant (its record, the order of its item ids and its items, see
//! `keys.rs`), each operation one script (see `scripts.rs` here) or one
//! plain command, so one round trip on one node whatever the
//! conversation's length.
//!
//! The store has no bounds of its own on conversations: Redis's
//! `maxmemory` is the bound, and a write it refuses for want of memory is
//! [`StoreError::NotKept`] and writes nothing.

mod scripts;

pub(super) use scripts::Scripts;

use super::keys::ConversationKeys;
use super::{ttl_seconds, RedisStore};
use crate::conversation::{
    ConversationStore, ItemPage, ItemQuery, Lookup, Order, StoredConversation, StoredItem,
};
use crate::{BoxFuture, StoreError};

/// The layout of a conversation's record (its `v` field).
const VERSION: &str = "1";

/// The fields of a record, as the scripts and [`ConversationStore::conversation`]
/// read them.
const RECORD_FIELDS: [&str; 3] = ["v", "created_at", "metadata"];

/// A record's values as Redis answers them: one per [`RECORD_FIELDS`].
type RecordValues = Vec<Option<Vec<u8>>>;

impl RedisStore {
    /// The keys of the tenant's conversation `id`, as a script's `KEYS`.
    fn conversation_keys(&self, tenant: &str, id: &str) -> ConversationKeys {
        self.keys(tenant).conversation(id)
    }

    /// The TTL argument of the writing scripts.
    fn ttl_arg(&self) -> String {
        ttl_seconds(self.ttl).to_string()
    }
}

/// `items` as script arguments after `leading`: each id, then its item.
fn with_items<'i>(leading: Vec<&'i [u8]>, items: &'i [StoredItem]) -> Vec<&'i [u8]> {
    let mut args = leading;
    args.reserve(items.len() * 2);
    for item in items {
        args.push(item.id.as_bytes());
        args.push(item.item.as_bytes());
    }
    args
}

/// Conversation `id` from its record's values; `None` when it has none.
fn read_record(
    id: &str,
    values: &[Option<Vec<u8>>],
) -> Result<Option<StoredConversation>, StoreError> {
    let corrupt = |why: &str| StoreError::Corrupt(format!("conversation {id}: {why}"));
    let [version, created_at, metadata] = values else {
        return Err(corrupt(&format!("its record read {} values", values.len())));
    };
    let (Some(version), Some(created_at), Some(metadata)) = (version, created_at, metadata) else {
        if values.iter().all(Option::is_none) {
            return Ok(None);
        }
        return Err(corrupt("its record lacks a field"));
    };
    if version.as_slice() != VERSION.as_bytes() {
        return Err(corrupt(&format!(
            "unknown record version {}",
            String::from_utf8_lossy(version)
        )));
    }
    let created_at = std::str::from_utf8(created_at)
        .ok()
        .and_then(|text| text.parse::<u64>().ok())
        .ok_or_else(|| corrupt("its created_at is not a number"))?;
    let metadata =
        String::from_utf8(metadata.clone()).map_err(|_| corrupt("its metadata is not UTF-8"))?;
    Ok(Some(StoredConversation {
        id: id.to_owned(),
        created_at,
        metadata,
    }))
}

/// Conversation `id` from the record a write answered with, which must be
/// there (the script found the conversation).
fn found_record(id: &str, values: &[Option<Vec<u8>>]) -> Result<StoredConversation, StoreError> {
    read_record(id, values)?
        .ok_or_else(|| StoreError::Corrupt(format!("conversation {id}: its record has no fields")))
}

/// A page from the list script's reply: `m` or `e` (more items follow, or
/// not), then ids and items in pairs; `n` when the item to list after is
/// not in the conversation.
fn read_page(id: &str, reply: Vec<Vec<u8>>) -> Result<Lookup<ItemPage>, StoreError> {
    let corrupt = |why: &str| StoreError::Corrupt(format!("the items of conversation {id}: {why}"));
    let mut values = reply.into_iter();
    let has_more = match values.next().as_deref() {
        Some(b"n") => return Ok(Lookup::NoItem),
        Some(b"m") => true,
        Some(b"e") => false,
        _ => return Err(corrupt("the reply starts with no page marker")),
    };
    let mut items = Vec::with_capacity(values.len() / 2);
    while let Some(item_id) = values.next() {
        let item = values
            .next()
            .ok_or_else(|| corrupt("an id without its item"))?;
        let item = String::from_utf8(item).map_err(|_| corrupt("an item is not UTF-8"))?;
        // What the store hands back is sent to backends as it is, joined
        // into one array: an item that is not JSON stops here.
        if serde_json::from_str::<&serde_json::value::RawValue>(&item).is_err() {
            return Err(corrupt("an item is not JSON"));
        }
        items.push(StoredItem {
            id: String::from_utf8(item_id).map_err(|_| corrupt("an item id is not UTF-8"))?,
            item,
        });
    }
    Ok(Lookup::Found(ItemPage { items, has_more }))
}

/// The list script's limit: a whole number Lua reads exactly enough (it
/// only compares it with the conversation's length), `usize::MAX` (every
/// item) clamped to `i64::MAX`.
fn limit_arg(limit: usize) -> String {
    u64::try_from(limit)
        .unwrap_or(u64::MAX)
        .min(i64::MAX.unsigned_abs())
        .to_string()
}

impl ConversationStore for RedisStore {
    fn create_conversation<'a>(
        &'a self,
        tenant: &'a str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, &conversation.id);
            let ttl = self.ttl_arg();
            let created_at = conversation.created_at.to_string();
            let leading: Vec<&[u8]> = vec![
                ttl.as_bytes(),
                VERSION.as_bytes(),
                created_at.as_bytes(),
                conversation.metadata.as_bytes(),
            ];
            let args = with_items(leading, &items);
            self.run::<()>(&self.scripts.conversations.create, &keys.all(), &args)
                .await
        })
    }

    fn conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(&keys.record).arg(&RECORD_FIELDS[..]);
            let values: RecordValues = self.bounded(self.send(&cmd)).await?;
            read_record(id, &values)
        })
    }

    fn update_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        metadata: String,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let ttl = self.ttl_arg();
            let values: Option<RecordValues> = self
                .run(
                    &self.scripts.conversations.update,
                    &keys.all(),
                    &[ttl.as_bytes(), metadata.as_bytes()],
                )
                .await?;
            values.map(|values| found_record(id, &values)).transpose()
        })
    }

    fn delete_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let existed: u64 = self
                .run(&self.scripts.conversations.delete, &keys.all(), &[])
                .await?;
            Ok(existed > 0)
        })
    }

    fn append_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let ttl = self.ttl_arg();
            let args = with_items(vec![ttl.as_bytes()], &items);
            let appended: u64 = self
                .run(&self.scripts.conversations.append, &keys.all(), &args)
                .await?;
            Ok(appended > 0)
        })
    }

    fn list_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        query: &'a ItemQuery,
    ) -> BoxFuture<'a, Result<Lookup<ItemPage>, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let after = match &query.after {
                Some(after) => format!("+{after}"),
                None => "-".to_owned(),
            };
            let limit = limit_arg(query.limit);
            let order: &[u8] = match query.order {
                Order::Ascending => b"a",
                Order::Descending => b"d",
            };
            let reply: Option<Vec<Vec<u8>>> = self
                .run(
                    &self.scripts.conversations.list,
                    &keys.all(),
                    &[after.as_bytes(), limit.as_bytes(), order],
                )
                .await?;
            match reply {
                None => Ok(Lookup::NoConversation),
                Some(reply) => read_page(id, reply),
            }
        })
    }

    fn item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredItem>, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let reply: Option<Vec<Vec<u8>>> = self
                .run(
                    &self.scripts.conversations.item,
                    &keys.all(),
                    &[item_id.as_bytes()],
                )
                .await?;
            let Some(reply) = reply else {
                return Ok(Lookup::NoConversation);
            };
            match <[Vec<u8>; 1]>::try_from(reply) {
                Ok([item]) => Ok(Lookup::Found(StoredItem {
                    id: item_id.to_owned(),
                    item: String::from_utf8(item).map_err(|_| {
                        StoreError::Corrupt(format!(
                            "item {item_id} of conversation {id} is not UTF-8"
                        ))
                    })?,
                })),
                Err(reply) if reply.is_empty() => Ok(Lookup::NoItem),
                Err(reply) => Err(StoreError::Corrupt(format!(
                    "reading item {item_id} of conversation {id} answered {} values",
                    reply.len()
                ))),
            }
        })
    }

    fn delete_item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let keys = self.conversation_keys(tenant, id);
            let ttl = self.ttl_arg();
            let reply: Option<RecordValues> = self
                .run(
                    &self.scripts.conversations.delete_item,
                    &keys.all(),
                    &[ttl.as_bytes(), item_id.as_bytes()],
                )
                .await?;
            match reply {
                None => Ok(Lookup::NoConversation),
                Some(values) if values.is_empty() => Ok(Lookup::NoItem),
                Some(values) => found_record(id, &values).map(Lookup::Found),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(values: &[Option<&str>]) -> RecordValues {
        values
            .iter()
            .map(|value| value.map(|v| v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn records_are_read_or_refused() {
        let kept = values(&[Some("1"), Some("1700000000"), Some(r#"{"a":"b"}"#)]);
        assert_eq!(
            read_record("conv_1", &kept),
            Ok(Some(StoredConversation {
                id: "conv_1".into(),
                created_at: 1_700_000_000,
                metadata: r#"{"a":"b"}"#.into(),
            }))
        );
        assert_eq!(
            read_record("conv_1", &values(&[None, None, None])),
            Ok(None)
        );
        for corrupt in [
            values(&[Some("2"), Some("1"), Some("{}")]),
            values(&[Some("1"), Some("soon"), Some("{}")]),
            values(&[Some("1"), None, Some("{}")]),
            values(&[Some("1")]),
        ] {
            let read = read_record("conv_1", &corrupt);
            assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
        }
        let none = found_record("conv_1", &values(&[None, None, None]));
        assert!(matches!(none, Err(StoreError::Corrupt(_))), "{none:?}");
    }

    #[test]
    fn pages_are_read_from_the_reply() {
        let reply = |parts: &[&str]| parts.iter().map(|p| p.as_bytes().to_vec()).collect();
        assert_eq!(read_page("c", reply(&["n"])), Ok(Lookup::NoItem));
        assert_eq!(
            read_page("c", reply(&["m", "a", "{}"])),
            Ok(Lookup::Found(ItemPage {
                items: vec![StoredItem {
                    id: "a".into(),
                    item: "{}".into()
                }],
                has_more: true,
            }))
        );
        for corrupt in [
            reply(&[]),
            reply(&["x"]),
            reply(&["e", "a"]),
            reply(&["e", "a", "{\"type\":"]),
            reply(&["e", "a", ""]),
        ] {
            let read = read_page("c", corrupt);
            assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
        }
    }

    #[test]
    fn limits_are_whole_numbers_lua_reads() {
        assert_eq!(limit_arg(0), "0");
        assert_eq!(limit_arg(20), "20");
        assert_eq!(limit_arg(usize::MAX), i64::MAX.to_string());
    }
}
