//! The stored items a request's `item_reference` items may name, found by
//! their id.
//!
//! Each item's id is read once, when the items are handed over: a
//! reference is then one look-up, and only the item it names is read
//! whole. Scanning every stored item for each reference instead made a
//! request of many references into a long turn cost their product.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::InputItem;

use crate::error::ConvertError;

/// Stored items by the id a reference names them with.
#[derive(Debug, Clone, Default)]
pub(super) struct Referable<'h> {
    /// Each id's first item, in the order given (as a scan would find it).
    by_id: HashMap<Cow<'h, str>, &'h RawValue>,
    /// Why an item could not be read, if one could not: a reference that
    /// names no other item may have named it.
    unreadable: Option<String>,
}

/// What the index reads of an item: its id.
#[derive(serde::Deserialize)]
struct ItemId<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
}

impl<'h> Referable<'h> {
    /// Indexes `items` (each a JSON object with its `id`).
    pub(super) fn new(items: impl IntoIterator<Item = &'h RawValue>) -> Self {
        let items = items.into_iter();
        let mut referable = Self {
            by_id: HashMap::with_capacity(items.size_hint().0),
            unreadable: None,
        };
        for raw in items {
            match serde_json::from_str::<ItemId<'h>>(raw.get()) {
                Ok(ItemId { id: Some(id) }) => {
                    referable.by_id.entry(id).or_insert(raw);
                }
                Ok(ItemId { id: None }) => {}
                Err(e) => {
                    referable.unreadable.get_or_insert_with(|| e.to_string());
                }
            }
        }
        referable
    }

    /// The item named `id`, read whole: `Ok(None)` when there is none.
    pub(super) fn get(
        &self,
        id: &str,
    ) -> Result<Option<(&'h RawValue, InputItem<'h>)>, ConvertError> {
        let Some(&raw) = self.by_id.get(id) else {
            return match &self.unreadable {
                Some(e) => Err(ConvertError::UnreadableHistory(e.clone())),
                None => Ok(None),
            };
        };
        let item = read_item(raw)?;
        Ok(Some((raw, item)))
    }
}

/// Reads a stored item whole.
fn read_item(raw: &RawValue) -> Result<InputItem<'_>, ConvertError> {
    #[cfg(test)]
    tests::ITEMS_READ.with(|read| read.set(read.get() + 1));
    serde_json::from_str(raw.get()).map_err(|e| ConvertError::UnreadableHistory(e.to_string()))
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;

    use super::super::{History, Options, ParsedRequest};
    use super::*;

    thread_local! {
        /// Stored items read whole on this thread.
        pub(super) static ITEMS_READ: Cell<usize> = const { Cell::new(0) };
    }

    fn items_read() -> usize {
        ITEMS_READ.with(Cell::get)
    }

    /// A stored turn of `n` messages, each with an id of its own.
    fn stored_turn(n: usize) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"type":"message","id":"msg_{i}","role":"user","content":[{{"type":"input_text","text":"item {i}"}}]}}"#
                )
            })
            .collect();
        format!("[{}]", items.join(","))
    }

    /// A request referring to each of `n` stored items, the last first.
    fn referring(n: usize) -> String {
        let references: Vec<String> = (0..n)
            .rev()
            .map(|i| format!(r#"{{"type":"item_reference","id":"msg_{i}"}}"#))
            .collect();
        format!(r#"{{"model":"m","input":[{}]}}"#, references.join(","))
    }

    /// Translates a request of `n` references into a stored turn of `n`
    /// items (keeping the turn, as a store does, which looks each
    /// reference up once more): the items read whole.
    fn reads_for(n: usize) -> usize {
        let turn = stored_turn(n);
        let items: Vec<&RawValue> = serde_json::from_str(&turn).unwrap();
        let history = History::default().with_referable_items(items);
        let body = referring(n);
        let before = items_read();
        let options = Options {
            store: true,
            ..Options::default()
        };
        let translated = ParsedRequest::parse(body.as_bytes())
            .unwrap()
            .translate(&history, &options)
            .unwrap();
        let read = items_read() - before;
        let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        let messages = chat["messages"].as_array().unwrap();
        assert_eq!(messages.len(), n);
        assert_eq!(messages[0]["content"], format!("item {}", n - 1));
        assert_eq!(messages[n - 1]["content"], "item 0");
        read
    }

    #[test]
    fn each_reference_reads_only_the_item_it_names() {
        // Scanning for each reference read about n²/2 items: 2 million
        // at 2,000. Now each reference reads its own item, once for the
        // translation and once for the turn kept.
        for n in [10, 2_000] {
            let read = reads_for(n);
            assert!(read <= 2 * n, "{n} references read {read} stored items");
        }
    }

    #[test]
    fn the_first_item_with_an_id_is_the_one_named() {
        let items: Vec<&RawValue> = serde_json::from_str(
            r#"[{"id":"a","type":"message","role":"user","content":"first"},
                {"id":"a","type":"message","role":"user","content":"second"}]"#,
        )
        .unwrap();
        let referable = Referable::new(items);
        let (raw, _) = referable.get("a").unwrap().unwrap();
        assert!(raw.get().contains("first"));
        assert!(referable.get("b").unwrap().is_none());
    }

    #[test]
    fn an_unreadable_item_is_an_error_for_a_reference_that_finds_none() {
        let items: Vec<&RawValue> =
            serde_json::from_str(r#"[{"id":"a","role":"user","content":"hi"}, 7]"#).unwrap();
        let referable = Referable::new(items);
        assert!(referable.get("a").unwrap().is_some());
        assert!(matches!(
            referable.get("b"),
            Err(ConvertError::UnreadableHistory(_))
        ));
    }
}
