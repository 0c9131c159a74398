//! Arbitrary bytes as a sequence of Conversations API calls by two
//! tenants, answered by a Responses client's layer with a memory store
//! (`wirebridge_fuzz::stateful`), checked against a model of the
//! conversations the target keeps itself.
//!
//! The input is operations, each a byte (its value modulo 8) and its own
//! bytes; `[flags]` bit 0 chooses the tenant, and `[conversation]` indexes
//! the conversations created so far (past them, a made-up id):
//!
//! ```text
//! 0 [flags] [n] [text]…          create, with n (0–3) messages
//! 1 [flags] [conversation] [n] [text]…   add n (0–21) messages
//! 2 [flags] [conversation] [order] [limit] [after]   list items
//! 3 [flags] [conversation] [item]   get an item (indexing its items)
//! 4 [flags] [conversation] [item]   delete an item
//! 5 [flags] [conversation] [n] [len]…   set n (0–17) metadata keys
//! 6 [flags] [conversation]       delete the conversation
//! 7 [flags] [conversation]       retrieve it
//! ```
//!
//! A `[text]` byte is a message's text (that many `a`s, plus the byte).
//! `[order]`: modulo 3, none, `asc` or `desc`. `[limit]`: 0 none, else
//! `limit=` the byte minus 1 (0 and past 100 are refused). `[after]`: 0
//! none, 255 a made-up id, else an item of the conversation by index
//! (deleted ones included, which the model remembers).
//!
//! Checked, beyond not panicking: no 5xx, every error in the OpenAI shape;
//! a conversation another tenant created, or one deleted, is a 404 to
//! every call; an item deleted is a 404; a list holds the model's items,
//! in its order, from after the item named, as many as the limit, with
//! `first_id`, `last_id` and `has_more` to match; an item read back is the
//! one added; metadata reads back as set; invalid limits, metadata and
//! numbers of items are a 400 naming the field.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use wirebridge_fuzz::stateful::{Answer, ByteReader, Harness};

/// Calls one input may make.
const MAX_OPERATIONS: usize = 32;

/// A conversation as the model keeps it.
struct Conversation {
    tenant: usize,
    id: String,
    /// Its items: id, text, and whether it was deleted.
    items: Vec<(String, String, bool)>,
    metadata: Value,
    deleted: bool,
}

impl Conversation {
    fn live(&self) -> impl DoubleEndedIterator<Item = &(String, String, bool)> {
        self.items.iter().filter(|(_, _, deleted)| !deleted)
    }
}

fn text(byte: u8) -> String {
    format!("{}{byte}", "a".repeat(usize::from(byte)))
}

fn messages(input: &mut ByteReader<'_>, n: usize) -> (Vec<Value>, Vec<String>) {
    let texts: Vec<String> = (0..n).map(|_| text(input.byte())).collect();
    let items = texts
        .iter()
        .map(|t| json!({"type": "message", "role": "user", "content": t}))
        .collect();
    (items, texts)
}

/// The text of a stored message: its content as a string, or its first
/// part's text.
fn text_of(item: &Value) -> Option<&str> {
    let content = &item["content"];
    content.as_str().or_else(|| content[0]["text"].as_str())
}

/// The items a 200 list or addition holds: id and text.
fn listed(answer: &Answer, what: &str) -> Vec<(String, String)> {
    let data = answer
        .json
        .as_ref()
        .and_then(|j| j["data"].as_array())
        .unwrap_or_else(|| panic!("{what}: no data"));
    data.iter()
        .map(|item| {
            let id = item["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: an item without id"));
            let text = text_of(item).unwrap_or_else(|| panic!("{what}: an item without text"));
            (id.to_owned(), text.to_owned())
        })
        .collect()
}

/// Checks a refusal's status and field.
fn refused(answer: &Answer, status: u16, param: Option<&str>, what: &str) {
    assert_eq!(answer.status, status, "{what}");
    assert_eq!(answer.error().0, param, "{what}");
}

struct Run {
    harness: Harness,
    conversations: Vec<Conversation>,
}

impl Run {
    /// The conversation `index` names, and its id (made up past them).
    fn pick(&self, index: u8) -> (Option<usize>, String) {
        match self.conversations.get(usize::from(index)) {
            Some(c) => (Some(usize::from(index)), c.id.clone()),
            None => (None, format!("conv_{index:02x}")),
        }
    }

    /// Whether `tenant` may reach conversation `at`.
    fn reaches(&self, at: Option<usize>, tenant: usize) -> Option<usize> {
        at.filter(|&at| {
            let c = &self.conversations[at];
            c.tenant == tenant && !c.deleted
        })
    }

    fn step(&mut self, operation: u8, input: &mut ByteReader<'_>) {
        let tenant = usize::from(input.byte() & 1);
        let kind = operation % 8;
        if kind == 0 {
            return self.create(tenant, input);
        }
        let (at, id) = self.pick(input.byte());
        let reached = self.reaches(at, tenant);
        let base = format!("/v1/conversations/{id}");
        let h = &self.harness;
        match kind {
            1 => {
                let n = usize::from(input.byte() % 22);
                let (items, texts) = messages(input, n);
                let body = json!({"items": items}).to_string().into_bytes();
                let answer = h.call("POST", &format!("{base}/items"), tenant, Some(body));
                let what = format!("add {n} to {id}: {} {:?}", answer.status, answer.body);
                answer.check_shape(&what);
                // Too many are refused before the conversation is looked
                // up; none add nothing, if they are taken.
                if n > 20 {
                    return refused(&answer, 400, Some("items"), &what);
                }
                if n == 0 {
                    return;
                }
                let Some(at) = reached else {
                    return refused(&answer, 404, None, &what);
                };
                assert_eq!(answer.status, 200, "{what}");
                let added = listed(&answer, &what);
                let added_texts: Vec<&String> = added.iter().map(|(_, t)| t).collect();
                assert_eq!(added_texts, texts.iter().collect::<Vec<_>>(), "{what}");
                for (item, text) in added {
                    self.conversations[at].items.push((item, text, false));
                }
            }
            2 => self.list(tenant, reached, &id, input),
            3 | 4 => {
                let index = input.byte();
                let item = reached
                    .or(at)
                    .and_then(|at| self.conversations[at].items.get(usize::from(index)))
                    .map_or_else(|| format!("msg_{index:02x}"), |(item, _, _)| item.clone());
                let method = if kind == 3 { "GET" } else { "DELETE" };
                let answer = h.call(method, &format!("{base}/items/{item}"), tenant, None);
                let what = format!("{method} {id}/{item}: {} {:?}", answer.status, answer.body);
                answer.check_shape(&what);
                let Some(at) = reached else {
                    return refused(&answer, 404, None, &what);
                };
                let conversation = &mut self.conversations[at];
                let Some(kept) = conversation
                    .items
                    .iter_mut()
                    .find(|(i, _, deleted)| *i == item && !deleted)
                else {
                    assert_eq!(answer.status, 404, "{what}");
                    return;
                };
                assert_eq!(answer.status, 200, "{what}");
                let json = answer.json.as_ref().expect("a 200 is JSON");
                if method == "GET" {
                    assert_eq!(json["id"], item.as_str(), "{what}");
                    assert_eq!(text_of(json), Some(kept.1.as_str()), "{what}");
                } else {
                    assert_eq!(json["id"], conversation.id.as_str(), "{what}");
                    kept.2 = true;
                }
            }
            5 => {
                let n = usize::from(input.byte() % 18);
                let mut metadata = serde_json::Map::new();
                let mut valid = true;
                for k in 0..n {
                    let len = usize::from(input.byte());
                    // Keys past 64 characters, and values past 512, are
                    // refused.
                    let key = format!("{k}{}", "k".repeat(len / 3));
                    let value = "v".repeat(len * 3);
                    valid &= key.chars().count() <= 64 && value.chars().count() <= 512;
                    metadata.insert(key, Value::String(value));
                }
                valid &= n <= 16;
                let metadata = Value::Object(metadata);
                let body = json!({"metadata": metadata}).to_string().into_bytes();
                let answer = h.call("POST", &base, tenant, Some(body));
                let what = format!("update {id}: {} {:?}", answer.status, answer.body);
                answer.check_shape(&what);
                if !valid {
                    return refused(&answer, 400, Some("metadata"), &what);
                }
                let Some(at) = reached else {
                    return refused(&answer, 404, None, &what);
                };
                assert_eq!(answer.status, 200, "{what}");
                let json = answer.json.as_ref().expect("a 200 is JSON");
                assert_eq!(json["metadata"], metadata, "{what}");
                self.conversations[at].metadata = metadata;
            }
            6 => {
                let answer = h.call("DELETE", &base, tenant, None);
                let what = format!("delete {id}: {} {:?}", answer.status, answer.body);
                answer.check_shape(&what);
                let Some(at) = reached else {
                    return refused(&answer, 404, None, &what);
                };
                assert_eq!(answer.status, 200, "{what}");
                let json = answer.json.as_ref().expect("a 200 is JSON");
                assert_eq!(json["deleted"], true, "{what}");
                self.conversations[at].deleted = true;
            }
            _ => {
                let answer = h.call("GET", &base, tenant, None);
                let what = format!("retrieve {id}: {} {:?}", answer.status, answer.body);
                answer.check_shape(&what);
                let Some(at) = reached else {
                    return refused(&answer, 404, None, &what);
                };
                assert_eq!(answer.status, 200, "{what}");
                let json = answer.json.as_ref().expect("a 200 is JSON");
                assert_eq!(json["id"], id.as_str(), "{what}");
                assert_eq!(json["metadata"], self.conversations[at].metadata, "{what}");
            }
        }
    }

    fn create(&mut self, tenant: usize, input: &mut ByteReader<'_>) {
        let n = usize::from(input.byte() % 4);
        let (items, texts) = messages(input, n);
        let body = json!({"items": items}).to_string().into_bytes();
        let answer = self
            .harness
            .call("POST", "/v1/conversations", tenant, Some(body));
        let what = format!("create: {} {:?}", answer.status, answer.body);
        answer.check_shape(&what);
        assert_eq!(answer.status, 200, "{what}");
        let json = answer.json.as_ref().expect("a 200 is JSON");
        let id = json["id"]
            .as_str()
            .expect("a conversation has an id")
            .to_owned();
        assert_eq!(json["metadata"], json!({}), "{what}");
        // Its items, as the first list reads them: the texts sent, in order.
        let path = format!("/v1/conversations/{id}/items?order=asc&limit=100");
        let list = self.harness.call("GET", &path, tenant, None);
        let what = format!("{what}\nlist: {} {:?}", list.status, list.body);
        assert_eq!(list.status, 200, "{what}");
        let kept = listed(&list, &what);
        let kept_texts: Vec<&String> = kept.iter().map(|(_, t)| t).collect();
        assert_eq!(kept_texts, texts.iter().collect::<Vec<_>>(), "{what}");
        self.conversations.push(Conversation {
            tenant,
            id,
            items: kept.into_iter().map(|(i, t)| (i, t, false)).collect(),
            metadata: json!({}),
            deleted: false,
        });
    }

    fn list(&self, tenant: usize, reached: Option<usize>, id: &str, input: &mut ByteReader<'_>) {
        let order = input.byte() % 3;
        let limit = input.byte();
        let after = input.byte();
        let mut query = Vec::new();
        match order {
            1 => query.push("order=asc".to_owned()),
            2 => query.push("order=desc".to_owned()),
            _ => {}
        }
        if limit > 0 {
            query.push(format!("limit={}", limit - 1));
        }
        let items = reached.map(|at| &self.conversations[at].items);
        let after_id = match after {
            0 => None,
            255 => Some("msg_made_up".to_owned()),
            n => Some(
                items
                    .and_then(|items| items.get(usize::from(n) - 1))
                    .map_or_else(|| format!("msg_{n:02x}"), |(item, _, _)| item.clone()),
            ),
        };
        if let Some(after) = &after_id {
            query.push(format!("after={after}"));
        }
        let path = format!("/v1/conversations/{id}/items?{}", query.join("&"));
        let answer = self.harness.call("GET", &path, tenant, None);
        let what = format!("list {path}: {} {:?}", answer.status, answer.body);
        answer.check_shape(&what);
        if limit == 1 || limit > 101 {
            return refused(&answer, 400, Some("limit"), &what);
        }
        let Some(at) = reached else {
            return refused(&answer, 404, None, &what);
        };
        let conversation = &self.conversations[at];
        let mut expected: Vec<&(String, String, bool)> = match order {
            1 => conversation.live().collect(),
            _ => conversation.live().rev().collect(),
        };
        if let Some(after) = &after_id {
            match expected.iter().position(|(item, _, _)| item == after) {
                Some(at) => expected.drain(..=at).for_each(drop),
                None => return refused(&answer, 400, Some("after"), &what),
            }
        }
        let limit = if limit == 0 {
            20
        } else {
            usize::from(limit) - 1
        };
        let has_more = expected.len() > limit;
        expected.truncate(limit);
        assert_eq!(answer.status, 200, "{what}");
        let got = listed(&answer, &what);
        let want: Vec<(String, String)> = expected
            .iter()
            .map(|(i, t, _)| (i.clone(), t.clone()))
            .collect();
        assert_eq!(got, want, "{what}");
        let json = answer.json.as_ref().expect("a 200 is JSON");
        assert_eq!(json["has_more"], has_more, "{what}");
        let first = want.first().map(|(i, _)| i.as_str());
        let last = want.last().map(|(i, _)| i.as_str());
        assert_eq!(json["first_id"].as_str(), first, "{what}");
        assert_eq!(json["last_id"].as_str(), last, "{what}");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = ByteReader(data);
    let mut run = Run {
        harness: Harness::new(usize::MAX),
        conversations: Vec::new(),
    };
    for _ in 0..MAX_OPERATIONS {
        let Some(operation) = input.take() else { break };
        run.step(operation, &mut input);
    }
});
