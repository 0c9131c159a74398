//! The items of one conversation in `MemoryStore`: in the order they were
//! added, each found by its id without a walk through the others.
//!
//! Every item takes the next number of its conversation, and is kept under
//! it in an ordered map, with an index from its id to that number. Adding
//! an item, finding one by id or deleting one then costs the same however
//! long the conversation is, and a page reads only the items it lists (and
//! the one after, to know whether more follow). Numbers are never reused:
//! deleting an item leaves a gap, which keeps the numbers of the items after
//! it, and so the order, unchanged without moving them.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use crate::conversation::{ItemQuery, Order, StoredItem};

/// A conversation's items, oldest first, indexed by id.
#[derive(Debug, Default)]
pub(super) struct Items {
    /// The items by their number: the order they were added in.
    by_number: BTreeMap<u64, StoredItem>,
    /// Each item's number, by its id.
    numbers: HashMap<String, u64>,
    /// The number the next item takes.
    next: u64,
    /// The bytes of the items, by [`StoredItem::size`].
    bytes: usize,
}

impl Items {
    /// Whether an item has this id.
    pub(super) fn holds(&self, id: &str) -> bool {
        touch(1);
        self.numbers.contains_key(id)
    }

    /// The bytes of the items, by [`StoredItem::size`].
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds `item` at the end, unless an item has its id already; whether
    /// it was added.
    pub(super) fn push(&mut self, item: StoredItem) -> bool {
        touch(1);
        match self.numbers.entry(item.id.clone()) {
            Entry::Occupied(_) => false,
            Entry::Vacant(vacant) => {
                let number = self.next;
                self.next += 1;
                vacant.insert(number);
                self.bytes += item.size();
                self.by_number.insert(number, item);
                true
            }
        }
    }

    /// The item of this id.
    pub(super) fn get(&self, id: &str) -> Option<&StoredItem> {
        touch(1);
        let number = self.numbers.get(id)?;
        self.by_number.get(number)
    }

    /// Removes the item of this id, and gives it back.
    pub(super) fn remove(&mut self, id: &str) -> Option<StoredItem> {
        touch(1);
        let number = self.numbers.remove(id)?;
        let item = self.by_number.remove(&number)?;
        self.bytes -= item.size();
        Some(item)
    }

    /// The page `query` asks for, and whether more items follow it; `Err`
    /// when `query.after` names no item.
    pub(super) fn page(&self, query: &ItemQuery) -> Result<(Vec<StoredItem>, bool), ()> {
        let range = match &query.after {
            None => (Bound::Unbounded, Bound::Unbounded),
            Some(after) => {
                touch(1);
                let at = *self.numbers.get(after).ok_or(())?;
                match query.order {
                    Order::Ascending => (Bound::Excluded(at), Bound::Unbounded),
                    Order::Descending => (Bound::Unbounded, Bound::Excluded(at)),
                }
            }
        };
        let range = self.by_number.range(range).map(|(_, item)| item);
        let ordered: Box<dyn Iterator<Item = &StoredItem>> = match query.order {
            Order::Ascending => Box::new(range),
            Order::Descending => Box::new(range.rev()),
        };
        let mut ordered = ordered.inspect(|_| touch(1)).peekable();
        let page: Vec<StoredItem> = ordered.by_ref().take(query.limit).cloned().collect();
        let more = ordered.peek().is_some();
        Ok((page, more))
    }
}

impl FromIterator<StoredItem> for Items {
    /// The items in order, the first of a repeated id kept.
    fn from_iter<I: IntoIterator<Item = StoredItem>>(items: I) -> Self {
        let mut kept = Self::default();
        for item in items {
            kept.push(item);
        }
        kept
    }
}

#[cfg(test)]
thread_local! {
    /// The items this thread's conversations have looked at so far.
    static TOUCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `n` items looked at, for the tests that bound what an operation
/// costs by the items it looks at (a count is deterministic, a time is
/// not): each item a page visits, and each lookup by id (one hash lookup,
/// whatever the conversation's length).
#[cfg(test)]
pub(super) fn touch(n: u64) {
    TOUCHED.with(|touched| touched.set(touched.get() + n));
}

#[cfg(not(test))]
#[inline(always)]
fn touch(_: u64) {}

/// The items this thread's conversations have looked at so far.
#[cfg(test)]
pub(super) fn touched() -> u64 {
    TOUCHED.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(ids: &[&str]) -> Items {
        ids.iter()
            .map(|id| StoredItem {
                id: (*id).to_owned(),
                item: format!(r#"{{"id":"{id}"}}"#),
            })
            .collect()
    }

    fn ids(page: &[StoredItem]) -> Vec<String> {
        page.iter().map(|item| item.id.clone()).collect()
    }

    #[test]
    fn pages_follow_order_after_and_limit() {
        let mut all = items(&["a", "b", "x", "c", "d", "a"]);
        assert!(all.remove("x").is_some());
        let query = |after: Option<&str>, limit, order| ItemQuery {
            after: after.map(str::to_owned),
            limit,
            order,
        };
        let (page, more) = all.page(&query(None, 2, Order::Descending)).unwrap();
        assert_eq!((ids(&page), more), (vec!["d".into(), "c".into()], true));
        let (page, more) = all.page(&query(Some("c"), 2, Order::Descending)).unwrap();
        assert_eq!((ids(&page), more), (vec!["b".into(), "a".into()], false));
        let (page, more) = all.page(&query(Some("b"), 5, Order::Ascending)).unwrap();
        assert_eq!((ids(&page), more), (vec!["c".into(), "d".into()], false));
        assert_eq!(all.page(&query(Some("x"), 5, Order::Ascending)), Err(()));
        let (page, more) = all.page(&ItemQuery::all()).unwrap();
        assert_eq!(
            (ids(&page), more),
            (vec!["a".into(), "b".into(), "c".into(), "d".into()], false)
        );
    }

    #[test]
    fn bytes_follow_what_is_kept() {
        let mut all = items(&["a", "b", "a"]);
        let size = |id: &str| id.len() + format!(r#"{{"id":"{id}"}}"#).len();
        assert_eq!(all.bytes(), size("a") + size("b"));
        let removed = all.remove("a").map(|item| item.id);
        assert_eq!(removed.as_deref(), Some("a"));
        assert_eq!(all.bytes(), size("b"));
        assert!(all.remove("a").is_none());
        // A deleted id may be added again, at the end.
        assert!(all.push(StoredItem {
            id: "a".into(),
            item: r#"{"id":"a"}"#.into()
        }));
        let (page, _) = all.page(&ItemQuery::all()).unwrap();
        assert_eq!(ids(&page), ["b", "a"]);
    }
}
