//! Where the stored items a request's `item_reference` items may name are,
//! found by id in one pass over their turns.
//!
//! The index keeps places, not text: the turns stay where the resolved
//! request keeps them, and what each reference would add to the request
//! is known before anything is built from it.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;
use wirebridge_convert::ConvertError;
use wirebridge_store::StoredTurn;

use crate::replies::Refused;

/// Where one stored item is: a turn (by its place in the turns indexed),
/// its input or its output array, and the item's bytes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct ItemAt {
    turn: usize,
    output: bool,
    start: usize,
    end: usize,
}

impl ItemAt {
    /// The item's length in bytes: what a reference to it adds.
    pub(super) fn len(self) -> usize {
        self.end - self.start
    }

    /// The item, in `turns` (the turns indexed, in the same order).
    pub(super) fn item<'t>(self, turns: &[&'t StoredTurn]) -> Result<&'t RawValue, Refused> {
        let turn = turns
            .get(self.turn)
            .ok_or_else(|| unreadable("a turn went missing"))?;
        let array: &'t str = match self.output {
            true => &turn.output,
            false => &turn.input,
        };
        let text = array
            .get(self.start..self.end)
            .ok_or_else(|| unreadable("an item went missing"))?;
        serde_json::from_str(text).map_err(|e| unreadable(&e.to_string()))
    }
}

/// The referable items by id.
#[derive(Debug, Default)]
pub(super) struct ReferableIndex {
    /// Each id's first item, in the order of the turns (input before
    /// output), as a scan would find it.
    at: HashMap<Box<str>, ItemAt>,
}

/// What the index reads of an item: its id.
#[derive(serde::Deserialize)]
struct ItemId<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
}

impl ReferableIndex {
    /// Indexes the items of `turns`: each array read once, each item's id
    /// once.
    pub(super) fn new<'t>(
        turns: impl IntoIterator<Item = &'t StoredTurn>,
    ) -> Result<Self, Refused> {
        let mut index = Self::default();
        for (n, turn) in turns.into_iter().enumerate() {
            for (output, array) in [(false, &*turn.input), (true, &*turn.output)] {
                let items: Vec<&RawValue> =
                    serde_json::from_str(array).map_err(|e| unreadable(&e.to_string()))?;
                for raw in items {
                    let Ok(ItemId { id: Some(id) }) = serde_json::from_str(raw.get()) else {
                        // Nothing a reference can name (the translation
                        // reads the conversation's own items itself).
                        continue;
                    };
                    let start = raw.get().as_ptr() as usize - array.as_ptr() as usize;
                    let at = ItemAt {
                        turn: n,
                        output,
                        start,
                        end: start + raw.get().len(),
                    };
                    index.at.entry(Box::from(&*id)).or_insert(at);
                }
            }
        }
        Ok(index)
    }

    /// Where the item named `id` is, if any.
    pub(super) fn get(&self, id: &str) -> Option<ItemAt> {
        self.at.get(id).copied()
    }
}

/// Stored items the store handed back that are not JSON.
fn unreadable(why: &str) -> Refused {
    Refused::from_convert(ConvertError::UnreadableHistory(why.to_owned()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn turn(id: &str, input: &str, output: &str) -> StoredTurn {
        StoredTurn {
            id: Arc::from(id),
            input: Arc::from(input),
            output: Arc::from(output),
        }
    }

    #[test]
    fn items_are_found_where_they_are_and_the_first_of_an_id_wins() {
        let turns = [
            turn("r1", r#"[ {"id":"a","n":1} , {"n":2}]"#, r#"[{"id":"b"}]"#),
            turn("r2", r#"[{"id":"a","n":3}]"#, "[]"),
        ];
        let index = ReferableIndex::new(&turns).unwrap();
        let turns: Vec<&StoredTurn> = turns.iter().collect();
        let a = index.get("a").unwrap();
        assert_eq!(a.item(&turns).unwrap().get(), r#"{"id":"a","n":1}"#);
        assert_eq!(a.len(), r#"{"id":"a","n":1}"#.len());
        assert_eq!(
            index.get("b").unwrap().item(&turns).unwrap().get(),
            r#"{"id":"b"}"#
        );
        assert!(index.get("c").is_none());
    }

    #[test]
    fn a_turn_that_is_not_json_is_unreadable() {
        assert!(ReferableIndex::new(&[turn("r1", "[{", "[]")]).is_err());
    }
}
