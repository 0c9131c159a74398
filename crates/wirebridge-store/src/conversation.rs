//! Conversations: what makes `/v1/conversations` and the `conversation`
//! field of a response work when the backend keeps no state.
//!
//! A conversation is a list of items, in the order they were added, with
//! its metadata. Items are added by hand (on creation, or with
//! `POST …/items`) and by every response created in the conversation (its
//! turn's input, then its output). Like a stored response, a conversation is
//! tenant-scoped and lives a TTL after it was last written.

use crate::{BoxFuture, StoreError};

/// A conversation's own record, without its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredConversation {
    /// The conversation id (`conv_…`).
    pub id: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The metadata, a JSON object (`{}` when none was given).
    pub metadata: String,
}

impl StoredConversation {
    /// Bytes this record holds, for size limits.
    pub fn size(&self) -> usize {
        self.id.len() + self.metadata.len()
    }
}

/// One item of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredItem {
    /// The item's id, unique in its conversation.
    pub id: String,
    /// The item, a JSON object (with its `id`).
    pub item: String,
}

impl StoredItem {
    /// Bytes this item holds, for size limits.
    pub fn size(&self) -> usize {
        self.id.len() + self.item.len()
    }
}

/// The order a page lists items in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// Oldest first.
    Ascending,
    /// Newest first, as the API lists by default.
    #[default]
    Descending,
}

/// Which items of a conversation to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemQuery {
    /// List the items after this one, in the page's order.
    pub after: Option<String>,
    /// At most this many items.
    pub limit: usize,
    /// The order to list them in.
    pub order: Order,
}

impl ItemQuery {
    /// Every item, oldest first: the history of a turn in the conversation.
    pub fn all() -> Self {
        Self {
            after: None,
            limit: usize::MAX,
            order: Order::Ascending,
        }
    }
}

/// One page of a conversation's items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemPage {
    /// The items, in the order asked for.
    pub items: Vec<StoredItem>,
    /// Whether more items follow the last one.
    pub has_more: bool,
}

/// What a lookup in a conversation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T> {
    /// The conversation, and the item asked for when one was.
    Found(T),
    /// The tenant has no such conversation.
    NoConversation,
    /// The conversation has no item with the id asked for.
    NoItem,
}

/// Where conversations are kept. Every method is scoped to a tenant: a
/// conversation is visible only to the tenant that created it.
///
/// Writes to one conversation are atomic: items appended by two turns that
/// run at once are all kept, each turn's together, in the order the turns
/// finished (each turn saw the conversation as it was when it began).
pub trait ConversationStore: Send + Sync + 'static {
    /// Creates a conversation with its first items. An item id given twice
    /// keeps the first; a conversation larger than the store's bounds is
    /// [`StoreError::NotKept`].
    fn create_conversation<'a>(
        &'a self,
        tenant: &'a str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// A conversation, if the tenant has it.
    fn conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>>;

    /// Replaces a conversation's metadata; the conversation as it now is,
    /// if the tenant has it.
    fn update_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        metadata: String,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>>;

    /// Deletes a conversation and its items; whether it existed.
    fn delete_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Adds items at the end of a conversation, in one atomic write, and
    /// renews it; whether the tenant has it. An item whose id the
    /// conversation already holds is not added again. Items that would take
    /// the conversation over the store's bounds are [`StoreError::NotKept`],
    /// and none of them is added.
    fn append_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// A page of a conversation's items, as the conversation was at one
    /// moment, whatever writes run meanwhile; [`Lookup::NoItem`] when
    /// `query.after` names no item of it. The work of each step is bounded
    /// by what it lists, never by the conversation's length: in memory one
    /// lookup and the page's items, on a server pieces of bounded size,
    /// each one round trip.
    fn list_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        query: &'a ItemQuery,
    ) -> BoxFuture<'a, Result<Lookup<ItemPage>, StoreError>>;

    /// One item of a conversation.
    fn item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredItem>, StoreError>>;

    /// Deletes one item of a conversation; the conversation, when it had
    /// the item.
    fn delete_item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredConversation>, StoreError>>;
}
