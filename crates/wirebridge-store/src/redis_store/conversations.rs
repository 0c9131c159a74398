//! Conversations (`/v1/conversations`) on Redis: each one three keys of its
//! tenant (its record, the order of its item ids and its items, see
//! `keys.rs`), each write one script (see `scripts.rs` here) or one plain
//! command, so one round trip on one node whatever the conversation's
//! length; a page of items is read in pieces of bounded size, one script
//! each, as the conversation was when the first was read.
//!
//! The store has no bounds of its own on conversations: Redis's
//! `maxmemory` is the bound, and a write it refuses for want of memory is
//! [`StoreError::NotKept`] and writes nothing.

#[cfg(test)]
mod reads;
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

/// The most items one piece of a page holds: a piece is one script, and
/// the server runs nothing else meanwhile.
const PIECE_ITEMS: usize = 512;

/// The bytes of items after which a piece ends (it holds at least one item,
/// so it may exceed this by one item).
const PIECE_BYTES: usize = 1 << 20;

/// How many times a page is read from its start when a write moves items
/// while it is read, before the read fails as unavailable.
const READ_ATTEMPTS: usize = 4;

/// What one piece of a page found.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// The item to list after is not in the conversation.
    NoItem,
    /// The conversation changed (or went) since the page's first piece.
    Changed,
    /// Items of the page, and where the page goes on.
    Items(Items),
}

/// A piece's items, and where the page goes on.
#[derive(Debug, PartialEq, Eq)]
struct Items {
    /// Whether more items follow the page: known from its first piece.
    has_more: Option<bool>,
    /// The conversation's generation when the page's first piece was read.
    generation: Vec<u8>,
    /// The position of the next piece's first item and of the page's last,
    /// while the page is not read whole.
    next: Option<(Vec<u8>, Vec<u8>)>,
    items: Vec<StoredItem>,
}

/// A piece from the list script's reply: `n`, `c`, or a marker (`m`, `e`
/// or `-`), the generation, the next position (`-` at the end of the page)
/// and the last one, then ids and items in pairs.
fn read_piece(id: &str, reply: Vec<Vec<u8>>) -> Result<Piece, StoreError> {
    let corrupt = |why: &str| StoreError::Corrupt(format!("the items of conversation {id}: {why}"));
    let mut values = reply.into_iter();
    let has_more = match values.next().as_deref() {
        Some(b"n") => return Ok(Piece::NoItem),
        Some(b"c") => return Ok(Piece::Changed),
        Some(b"m") => Some(true),
        Some(b"e") => Some(false),
        Some(b"-") => None,
        _ => return Err(corrupt("the reply starts with no page marker")),
    };
    let (Some(generation), Some(next), Some(last)) = (values.next(), values.next(), values.next())
    else {
        return Err(corrupt("the reply lacks where the page goes on"));
    };
    let next = (next != b"-").then_some((next, last));
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
    if next.is_some() && items.is_empty() {
        return Err(corrupt("a piece that is not the last holds no item"));
    }
    Ok(Piece::Items(Items {
        has_more,
        generation,
        next,
        items,
    }))
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

impl RedisStore {
    /// A page of conversation `id`'s items, read in pieces (see
    /// `scripts.rs`) as the conversation was when the first was read;
    /// `None` when a write moved its items meanwhile.
    async fn read_page(
        &self,
        tenant: &str,
        id: &str,
        query: &ItemQuery,
    ) -> Result<Option<Lookup<ItemPage>>, StoreError> {
        let keys = self.conversation_keys(tenant, id).all();
        let mut piece = match self.first_piece(&keys, id, query).await? {
            None => return Ok(Some(Lookup::NoConversation)),
            Some(Piece::NoItem) => return Ok(Some(Lookup::NoItem)),
            Some(Piece::Changed) => return Ok(None),
            Some(Piece::Items(piece)) => piece,
        };
        let has_more = piece.has_more.unwrap_or(false);
        let mut items = std::mem::take(&mut piece.items);
        while piece.next.is_some() {
            piece = match self.next_piece(&keys, id, query.order, &piece).await? {
                Some(later) => later,
                None => return Ok(None),
            };
            items.append(&mut piece.items);
        }
        Ok(Some(Lookup::Found(ItemPage { items, has_more })))
    }

    /// The first piece of the page `query` asks for; `None` when there is
    /// no conversation.
    async fn first_piece(
        &self,
        keys: &[String],
        id: &str,
        query: &ItemQuery,
    ) -> Result<Option<Piece>, StoreError> {
        let after = match &query.after {
            Some(after) => format!("+{after}"),
            None => "-".to_owned(),
        };
        let limit = limit_arg(query.limit);
        let (max_items, max_bytes) = (PIECE_ITEMS.to_string(), PIECE_BYTES.to_string());
        let args: [&[u8]; 6] = [
            b"-",
            after.as_bytes(),
            limit.as_bytes(),
            order_arg(query.order),
            max_items.as_bytes(),
            max_bytes.as_bytes(),
        ];
        let reply: Option<Vec<Vec<u8>>> = self
            .run(&self.scripts.conversations.list, keys, &args)
            .await?;
        reply.map(|reply| read_piece(id, reply)).transpose()
    }

    /// The piece after `previous` (which goes on); `None` when the
    /// conversation changed since the page's first piece.
    async fn next_piece(
        &self,
        keys: &[String],
        id: &str,
        order: Order,
        previous: &Items,
    ) -> Result<Option<Items>, StoreError> {
        let corrupt =
            |why: &str| StoreError::Corrupt(format!("the items of conversation {id}: {why}"));
        let Some((next, last)) = &previous.next else {
            return Err(corrupt("a piece after the last was asked for"));
        };
        let (max_items, max_bytes) = (PIECE_ITEMS.to_string(), PIECE_BYTES.to_string());
        let args: [&[u8]; 6] = [
            &previous.generation,
            next,
            last,
            order_arg(order),
            max_items.as_bytes(),
            max_bytes.as_bytes(),
        ];
        let reply: Option<Vec<Vec<u8>>> = self
            .run(&self.scripts.conversations.list, keys, &args)
            .await?;
        let reply = reply.ok_or_else(|| corrupt("a later piece answered nil"))?;
        match read_piece(id, reply)? {
            Piece::Changed => Ok(None),
            Piece::Items(later) if later.generation == previous.generation => Ok(Some(later)),
            _ => Err(corrupt("a later piece answered as a first")),
        }
    }
}

/// The list script's order argument.
fn order_arg(order: Order) -> &'static [u8] {
    match order {
        Order::Ascending => b"a",
        Order::Descending => b"d",
    }
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
            for _ in 0..READ_ATTEMPTS {
                if let Some(page) = self.read_page(tenant, id, query).await? {
                    return Ok(page);
                }
            }
            // No error caused it: the conversation kept changing.
            Err(StoreError::Unavailable {
                message: format!(
                    "conversation {id} changed while its items were read, {READ_ATTEMPTS} times"
                ),
                source: None,
            })
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
    fn pieces_are_read_from_the_reply() {
        let reply = |parts: &[&str]| parts.iter().map(|p| p.as_bytes().to_vec()).collect();
        assert_eq!(read_piece("c", reply(&["n"])), Ok(Piece::NoItem));
        assert_eq!(read_piece("c", reply(&["c"])), Ok(Piece::Changed));
        let item = StoredItem {
            id: "a".into(),
            item: "{}".into(),
        };
        assert_eq!(
            read_piece("c", reply(&["m", "g1", "-", "4", "a", "{}"])),
            Ok(Piece::Items(Items {
                has_more: Some(true),
                generation: b"g1".to_vec(),
                next: None,
                items: vec![item.clone()],
            }))
        );
        assert_eq!(
            read_piece("c", reply(&["-", "g", "3", "4", "a", "{}"])),
            Ok(Piece::Items(Items {
                has_more: None,
                generation: b"g".to_vec(),
                next: Some((b"3".to_vec(), b"4".to_vec())),
                items: vec![item],
            }))
        );
        for corrupt in [
            reply(&[]),
            reply(&["x"]),
            reply(&["e", "g"]),
            reply(&["e", "g", "-", "-", "a"]),
            reply(&["e", "g", "-", "-", "a", "{\"type\":"]),
            reply(&["e", "g", "-", "-", "a", ""]),
            // A piece that goes on must hold an item, or the read would
            // never end.
            reply(&["-", "g", "3", "4"]),
        ] {
            let read = read_piece("c", corrupt);
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
