//! Stored conversations: the history a request continues, and the turn a
//! store keeps once the response is done.
//!
//! A response store (kept by the caller: this crate does no IO) resolves
//! `previous_response_id` into the items of the earlier turns and hands them
//! over as [`History`]: JSON arrays of items, borrowed as stored. They are
//! translated exactly as if the client had sent them in `input`. What to
//! keep of the new turn comes back as a [`Turn`], and what to keep of the
//! reply as a [`Finished`](super::Finished).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{CreateResponse, Input, InputItem, ItemKind};
use wirebridge_wire::JsonStr;

use super::history_cache::{is_at, HistoryCache, SharedTurn, StoredPair};
use super::referable::Referable;
use crate::error::ConvertError;
use crate::ids::ResponseIds;

/// The conversation a request continues, as a response store keeps it.
///
/// Its arrays must be JSON, as a store hands them back having checked them
/// where it read them: a Responses backend is sent them as they are, joined
/// with the request's own items, not read again on every turn.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest};
///
/// let stored_input = r#"[{"type":"message","id":"msg_1","role":"user","content":"My name is Ada."}]"#;
/// let stored_output = r#"[{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello Ada!","annotations":[]}]}]"#;
/// let body = br#"{"model":"m","previous_response_id":"resp_1","input":"What is my name?"}"#;
///
/// let request = ParsedRequest::parse(body).unwrap();
/// assert_eq!(request.previous_response_id(), Some("resp_1"));
/// let history = History::new("resp_1", [stored_input, stored_output]);
/// let translated = request.translate(&history, &Options::default()).unwrap();
/// let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
/// assert_eq!(chat["messages"][0]["content"], "My name is Ada.");
/// assert_eq!(chat["messages"][1]["content"], "Hello Ada!");
/// assert_eq!(chat["messages"][2]["content"], "What is my name?");
/// ```
#[derive(Debug, Clone, Default)]
pub struct History<'h> {
    previous_response_id: Option<&'h str>,
    /// The conversation (`conversation`) whose items these are.
    conversation: Option<&'h str>,
    arrays: Vec<&'h str>,
    /// Stored items that `item_reference` input items may name, by id;
    /// `None` when no store resolves references.
    referable: Option<Referable<'h>>,
    /// Where translated turns are kept, and for whom.
    cache: Option<(&'h HistoryCache, &'h str)>,
    /// The response id of each turn (`arrays` in pairs), with a cache.
    turn_ids: Vec<&'h str>,
    /// The turns as their store shares them, when it does (see
    /// [`with_shared_cache`](Self::with_shared_cache)).
    shared: Vec<SharedTurn<'h>>,
}

impl<'h> History<'h> {
    /// The conversation that ended with response `id`: the items of its
    /// turns, oldest first, each a JSON array (a turn's input items, then
    /// its output items).
    pub fn new(id: &'h str, arrays: impl IntoIterator<Item = &'h str>) -> Self {
        Self {
            previous_response_id: Some(id),
            conversation: None,
            arrays: arrays.into_iter().collect(),
            referable: None,
            cache: None,
            turn_ids: Vec::new(),
            shared: Vec::new(),
        }
    }

    /// The items of conversation `id` (`conversation` on the request), one
    /// JSON array, oldest first: the history of a turn in that
    /// conversation, whose input and output are then added to it.
    pub fn in_conversation(id: &'h str, items: &'h str) -> Self {
        Self {
            previous_response_id: None,
            conversation: Some(id),
            arrays: vec![items],
            referable: None,
            cache: None,
            turn_ids: Vec::new(),
            shared: Vec::new(),
        }
    }

    /// Keeps the Chat form of these turns in `cache`, for tenant `scope`,
    /// and translates from it what it already holds (see
    /// [`HistoryCache`]): the arrays are then in pairs, each turn's input
    /// items and its output items, and `ids` the turns' response ids, in
    /// the same order. History of another shape is translated in full.
    pub fn with_cache(
        mut self,
        cache: &'h HistoryCache,
        scope: &'h str,
        ids: impl IntoIterator<Item = &'h str>,
    ) -> Self {
        if cache.max_bytes() > 0 {
            self.turn_ids = ids.into_iter().collect();
            self.cache = Some((cache, scope));
        }
        self
    }

    /// As [`with_cache`](Self::with_cache), with the turns as their store
    /// shares them, in the same order as the arrays (each turn's input,
    /// then its output): the cache then keeps the store's text, not a copy
    /// of it, and knows a turn again by where its text is rather than by
    /// comparing it byte for byte (at 500 turns, about a tenth of a turn's
    /// work through the proxy). A turn whose arrays are not the ones given
    /// here is compared and copied as with `with_cache`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use wirebridge_convert::responses_to_chat::{History, HistoryCache, Options, ParsedRequest, SharedTurn};
    ///
    /// let cache = HistoryCache::new(1 << 20);
    /// let id: Arc<str> = "resp_1".into();
    /// let input: Arc<str> = r#"[{"type":"message","role":"user","content":"Hi."}]"#.into();
    /// let output: Arc<str> = r#"[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello!"}]}]"#.into();
    /// let body = br#"{"model":"m","previous_response_id":"resp_1","input":"Again?"}"#;
    /// for _ in 0..2 {
    ///     let turn = SharedTurn { id: &id, input: &input, output: &output };
    ///     let history = History::new("resp_1", [&*input, &*output]).with_shared_cache(&cache, "tenant", [turn]);
    ///     let translated = ParsedRequest::parse(body).unwrap().translate(&history, &Options::default()).unwrap();
    ///     let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
    ///     assert_eq!(chat["messages"][1]["content"], "Hello!");
    /// }
    /// assert_eq!((cache.misses(), cache.hits()), (1, 1));
    /// ```
    pub fn with_shared_cache(
        self,
        cache: &'h HistoryCache,
        scope: &'h str,
        turns: impl IntoIterator<Item = SharedTurn<'h>>,
    ) -> Self {
        let shared: Vec<SharedTurn<'h>> = turns.into_iter().collect();
        let mut history = self.with_cache(cache, scope, shared.iter().map(|turn| &**turn.id));
        if history.cache.is_some() {
            history.shared = shared;
        }
        history
    }

    /// Counts a request translated with its stored turns spliced.
    pub(super) fn note_spliced(&self) {
        if let Some((cache, _)) = self.cache {
            cache.note_spliced();
        }
    }

    /// Whether translated turns are kept in a cache.
    pub(super) fn has_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// The cache, the tenant and the turns (id, input, output), when the
    /// history is kept in a cache.
    pub(super) fn cached_turns(&self) -> Option<(&'h HistoryCache, &'h str, Vec<StoredPair<'h>>)> {
        let (cache, scope) = self.cache?;
        if self.conversation.is_some()
            || self.turn_ids.is_empty()
            || self.arrays.len() != 2 * self.turn_ids.len()
        {
            return None;
        }
        let shared = (self.shared.len() == self.turn_ids.len()).then_some(&self.shared);
        let turns = self
            .turn_ids
            .iter()
            .zip(self.arrays.chunks_exact(2))
            .enumerate()
            .map(|(i, (id, pair))| StoredPair {
                id,
                input: pair[0],
                output: pair[1],
                // Only where the arrays are the shared text itself.
                shared: shared.map(|shared| shared[i]).filter(|shared| {
                    is_at(shared.id, id)
                        && is_at(shared.input, pair[0])
                        && is_at(shared.output, pair[1])
                }),
            })
            .collect();
        Some((cache, scope, turns))
    }

    /// The conversation whose items these are, if any.
    pub fn conversation(&self) -> Option<&'h str> {
        self.conversation
    }

    /// The stored items the request's `item_reference` items may name (each
    /// a JSON object with its `id`): a reference is replaced by the item it
    /// names, and one that names none of them is an error naming it.
    /// Without this, references are lost (reported under the loss policy).
    ///
    /// Each item's id is read here, once: a reference is then a look-up,
    /// and only the item it names is read whole. Where two items have the
    /// same id, the first is the one named.
    pub fn with_referable_items(mut self, items: impl IntoIterator<Item = &'h RawValue>) -> Self {
        self.referable = Some(Referable::new(items));
        self
    }

    /// The item named `id` among the referable ones: `Ok(None)` when no
    /// store resolves references, an error naming `path` when one does and
    /// has no such item.
    pub(super) fn referenced(
        &self,
        id: &str,
        path: &str,
    ) -> Result<Option<(&'h RawValue, InputItem<'h>)>, ConvertError> {
        let Some(referable) = &self.referable else {
            return Ok(None);
        };
        if let Some(found) = referable.get(id)? {
            return Ok(Some(found));
        }
        Err(ConvertError::invalid(
            path,
            format!(
                "no stored item has id '{id}' (it may have expired, or belong to another credential)"
            ),
        ))
    }

    /// The response the request continues, when a store resolved it.
    pub fn previous_response_id(&self) -> Option<&'h str> {
        self.previous_response_id
    }

    /// The stored turns, oldest first: each a JSON array of items.
    pub(crate) fn arrays(&self) -> &[&'h str] {
        &self.arrays
    }

    /// Bytes of stored items.
    pub(crate) fn text_len(&self) -> usize {
        self.arrays.iter().map(|a| a.len()).sum()
    }

    /// The stored items, parsed (borrowing the stored text).
    pub(super) fn items(&self) -> Result<Vec<InputItem<'h>>, ConvertError> {
        self.items_with_room(0)
    }

    /// The stored items, parsed into one list with room for `more` after
    /// them: each turn's array is read straight into it, so a deep
    /// history is neither collected turn by turn and moved, nor copied as
    /// the list grows (an item is a few hundred bytes; at 500 turns these
    /// copies and the fresh pages they touched were a fifth of a turn's
    /// time through the proxy).
    pub(super) fn items_with_room(&self, more: usize) -> Result<Vec<InputItem<'h>>, ConvertError> {
        // A stored item is seldom under 100 bytes: room for the text's
        // length over 96 holds a whole history of small turns.
        if self.arrays.is_empty() {
            return Ok(Vec::new());
        }
        let mut items = Vec::with_capacity(self.text_len() / 96 + more);
        for array in &self.arrays {
            read_items(array, &mut items)?;
        }
        Ok(items)
    }
}

/// Reads the stored JSON array of items `array` onto the end of `items`.
pub(super) fn read_items<'h>(
    array: &'h str,
    items: &mut Vec<InputItem<'h>>,
) -> Result<(), ConvertError> {
    let mut reader = serde_json::Deserializer::from_str(array);
    AppendItems(items)
        .deserialize(&mut reader)
        .and_then(|()| reader.end())
        .map_err(|e| ConvertError::UnreadableHistory(e.to_string()))
}

/// Reads a JSON array of items onto the end of a list.
struct AppendItems<'v, 'h>(&'v mut Vec<InputItem<'h>>);

impl<'de: 'h, 'h> DeserializeSeed<'de> for AppendItems<'_, 'h> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<(), D::Error> {
        reader.deserialize_seq(self)
    }
}

impl<'de: 'h, 'h> Visitor<'de> for AppendItems<'_, 'h> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element()? {
            self.0.push(item);
        }
        Ok(())
    }
}

/// The conversation a request names (`conversation`: an id, or an object
/// with its `id`); an error naming the field when it is neither, or when
/// `previous_response_id` is given too (the API takes only one of them).
pub(crate) fn conversation_id<'r>(
    request: &'r CreateResponse<'_>,
) -> Result<Option<Cow<'r, str>>, ConvertError> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Named<'a> {
        Id(#[serde(borrow)] Cow<'a, str>),
        Object {
            #[serde(borrow)]
            id: Cow<'a, str>,
        },
    }
    let Some(raw) = request.conversation.filter(|raw| raw.get() != "null") else {
        return Ok(None);
    };
    let id = match serde_json::from_str::<Named<'r>>(raw.get()) {
        Ok(Named::Id(id) | Named::Object { id }) if !id.is_empty() => id,
        _ => {
            return Err(ConvertError::invalid(
                "conversation",
                "conversation must be a conversation id, or an object with its `id`",
            ))
        }
    };
    if request.previous_response_id.is_some() {
        return Err(ConvertError::invalid(
            "conversation",
            "conversation and previous_response_id cannot be used together: a response either \
             continues a conversation or continues a response",
        ));
    }
    Ok(Some(id))
}

/// A turn as a response store keeps it: the response it continued and the
/// input items the client sent for it (not the history).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The response this turn continued.
    pub previous_response_id: Option<String>,
    /// The conversation this turn is part of: its input and output items
    /// are added to it once the response is done.
    pub conversation: Option<String>,
    /// This turn's own input items as a JSON array, each with a `type` and
    /// an `id` (`GET /v1/responses/{id}/input_items` lists them by id).
    pub input: String,
    /// Whether the client asked for the response to be stored (it did not
    /// send `store: false`).
    pub store: bool,
}

/// The turn's own input as items with ids: each item as the client wrote
/// it, with `"type":"message"` and an `id` spliced in where it had none.
///
/// An `item_reference` is kept as the item it names, so that the stored
/// turn reads back on its own.
pub(crate) fn turn_input(
    input: Option<&Input<'_>>,
    ids: &ResponseIds,
    history: &History<'_>,
) -> Result<String, ConvertError> {
    let mut out = String::new();
    match input {
        None => out.push('['),
        Some(Input::Text(text)) => {
            // The message around the text: its role and one content part.
            out.reserve(text.raw().get().len() + SPLICED + 96);
            out.push('[');
            user_message(&mut out, &ids.input_item("msg", 0), *text)
        }
        Some(Input::Items(items)) => {
            let raws = items
                .raw_items()
                .map_err(|e| ConvertError::invalid("input", e.to_string()))?;
            // Sized once: grown as written, the string would take more
            // allocations the more JSON the items hold.
            let len = raws.iter().map(|r| r.get().len() + SPLICED).sum::<usize>();
            out.reserve(len + 2);
            out.push('[');
            for (n, (raw, item)) in raws.iter().zip(items.iter()).enumerate() {
                if n > 0 {
                    out.push(',');
                }
                if item.classify() == ItemKind::ItemReference {
                    let id = item.id.as_deref().unwrap_or_default();
                    if let Some((named, _)) = history.referenced(id, &format!("input[{n}].id"))? {
                        out.push_str(named.get());
                        continue;
                    }
                }
                let id = item.id.is_none().then(|| ids.input_item(prefix(item), n));
                let kind = (item.kind.is_none() && item.role.is_some()).then_some("message");
                with_fields(&mut out, raw, kind, id.as_deref());
            }
        }
    }
    out.push(']');
    Ok(out)
}

/// Room for what is spliced into an item, `"type":"message","id":"…",`,
/// and the comma after it: 32 bytes of keys and punctuation, and an id of
/// a prefix (up to `item_`), a response's stem and `in` with 4 digits.
const SPLICED: usize = 32 + 5 + crate::ids::STEM_LEN + 6;

/// A string `input` as the message item it stands for.
fn user_message(out: &mut String, id: &str, text: JsonStr<'_>) {
    let _ = write!(
        out,
        r#"{{"type":"message","id":"{id}","role":"user","content":[{{"type":"input_text","text":{}}}]}}"#,
        text.raw().get()
    );
}

/// Writes the item `raw` (a JSON object) with `type` and `id` added in
/// front when given.
fn with_fields(out: &mut String, raw: &RawValue, kind: Option<&str>, id: Option<&str>) {
    let text = raw.get();
    if kind.is_none() && id.is_none() {
        out.push_str(text);
        return;
    }
    // Items are objects (the parse above read them as such): the fields go
    // right after the opening brace.
    let rest = text
        .trim_start()
        .strip_prefix('{')
        .unwrap_or(text)
        .trim_start();
    out.push('{');
    let mut first = true;
    for (key, value) in [("type", kind), ("id", id)] {
        if let Some(value) = value {
            if !first {
                out.push(',');
            }
            first = false;
            // Ids and types are generated here: no characters to escape.
            let _ = write!(out, r#""{key}":"{value}""#);
        }
    }
    if !rest.starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
}

/// The id prefix for an item of this kind, as the API names them.
fn prefix(item: &InputItem<'_>) -> &'static str {
    match item.classify() {
        ItemKind::Message => "msg",
        ItemKind::FunctionCall => "fc",
        ItemKind::FunctionCallOutput => "fco",
        ItemKind::CustomToolCall => "ctc",
        ItemKind::CustomToolCallOutput => "ctco",
        _ => "item",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebridge_wire::responses::lenient::CreateResponse;

    fn turn(body: &str) -> serde_json::Value {
        let request: CreateResponse<'_> = serde_json::from_str(body).unwrap();
        let ids = ResponseIds::new();
        serde_json::from_str(
            &turn_input(request.input.as_ref(), &ids, &History::default()).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn a_string_input_is_one_user_message() {
        let items = turn(r#"{"input":"Say \"hi\""}"#);
        assert_eq!(items[0]["type"], "message");
        assert_eq!(items[0]["role"], "user");
        assert_eq!(items[0]["content"][0]["text"], "Say \"hi\"");
        assert!(items[0]["id"].as_str().unwrap().starts_with("msg_"));
    }

    #[test]
    fn items_keep_their_fields_and_gain_a_type_and_an_id() {
        let items = turn(
            r#"{"input":[
                { "role" : "user", "content": "a", "id": "keep" },
                {"role":"user","content":[{"type":"input_text","text":"b"}]},
                {"type":"function_call_output","call_id":"c","output":"o"},
                {"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
                {"type":"mystery"},
                {}
            ]}"#,
        );
        assert_eq!(items[0]["id"], "keep");
        assert_eq!(items[0]["type"], "message");
        assert_eq!(items[1]["content"][0]["text"], "b");
        assert!(items[1]["id"].as_str().unwrap().starts_with("msg_"));
        assert!(items[2]["id"].as_str().unwrap().starts_with("fco_"));
        assert_eq!(items[2]["output"], "o");
        assert!(items[3]["id"].as_str().unwrap().starts_with("fc_"));
        assert!(items[4]["id"].as_str().unwrap().starts_with("item_"));
        assert!(items[5]["id"].as_str().unwrap().starts_with("item_"));
        assert_eq!(items.as_array().unwrap().len(), 6);
    }

    #[test]
    fn no_input_is_an_empty_list() {
        assert_eq!(turn("{}"), serde_json::json!([]));
    }

    #[test]
    fn unreadable_history_is_an_error() {
        let history = History::new("resp_1", ["[{\"role\":"]);
        assert!(matches!(
            history.items(),
            Err(ConvertError::UnreadableHistory(_))
        ));
    }
}
