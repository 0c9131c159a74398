//! What ties the requests of one conversation together when nothing names
//! it: a digest of the stable prefix of a translated request (its system
//! prompt, its tools, its first user message), which every turn of the
//! conversation repeats, and a hash that is the same in every process.
//!
//! A backend with a prefix cache serves a turn fastest on the replica that
//! served the turn before: the same digest every turn lets a router keep a
//! conversation on one replica. The digest reads the request the backend is
//! sent, in any of the three dialects (`instructions`, `system` or leading
//! `system`/`developer` messages; `tools`; the first `user` message of
//! `input` or `messages`), and hashes the *text* of the messages, not their
//! JSON: the first turn written from the client's input and the same turn
//! written later from the stored history may be shaped differently (a bare
//! string, a list of text parts) while the prompt is the same.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A 64-bit hash that does not depend on the process, the platform or the
/// Rust release (FNV-1a, then a finalizer that spreads its bits): every
/// process that hashes the same bytes gets the same number.
#[derive(Debug, Clone, Copy)]
pub struct StableHasher(u64);

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Default for StableHasher {
    fn default() -> Self {
        Self(FNV_OFFSET)
    }
}

impl StableHasher {
    /// A hasher with nothing written.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }

    /// Adds one field: its bytes, then its length, so that `("ab", "c")`
    /// and `("a", "bc")` differ.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(bytes);
        self.write(&(bytes.len() as u64).to_le_bytes());
    }

    /// The hash.
    pub fn finish(&self) -> u64 {
        mix(self.0)
    }

    /// The hash of one text.
    pub fn hash_text(text: &str) -> u64 {
        let mut hasher = Self::new();
        hasher.field(text.as_bytes());
        hasher.finish()
    }
}

/// MurmurHash3's 64-bit finalizer: each input bit flips about half of the
/// output bits, so that hashes compared against each other (rendezvous
/// weights) are not ordered by their inputs' likeness.
pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// What a request body names or repeats that ties it to its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixDigest {
    /// The body's `prompt_cache_key`.
    PromptCacheKey(String),
    /// The digest of the body's system prompt, tools and first user
    /// message.
    Prefix(u64),
}

/// The digest of a request body in any of the three dialects: its
/// `prompt_cache_key` when it has one, else its stable prefix. `None` for
/// a body that is not a JSON object.
pub fn prefix_digest(body: &[u8]) -> Option<PrefixDigest> {
    let read: Body<'_> = serde_json::from_slice(body).ok()?;
    if let Some(key) = read.prompt_cache_key {
        return Some(PrefixDigest::PromptCacheKey(key.into_owned()));
    }
    let mut hasher = StableHasher::new();
    for texts in [&read.system, &read.conversation.system] {
        hasher.write(b"system");
        for text in texts {
            hasher.field(text.as_bytes());
        }
    }
    hasher.write(b"tools");
    if let Some(tools) = read.tools {
        hasher.field(tools.get().as_bytes());
    }
    hasher.write(b"user");
    for text in &read.conversation.first_user {
        hasher.field(text.as_bytes());
    }
    Some(PrefixDigest::Prefix(hasher.finish()))
}

/// The parts of a request body the digest reads; the rest is skipped
/// without being kept.
#[derive(Default)]
struct Body<'a> {
    prompt_cache_key: Option<Cow<'a, str>>,
    /// `instructions` (Responses) or `system` (Messages).
    system: Vec<Cow<'a, str>>,
    tools: Option<&'a RawValue>,
    /// `input` or `messages`.
    conversation: Leading<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Body<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BodyVisitor(std::marker::PhantomData))
    }
}

struct BodyVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for BodyVisitor<'a> {
    type Value = Body<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Body<'a>, M::Error> {
        let mut body = Body::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "prompt_cache_key" => {
                    body.prompt_cache_key = map.next_value::<Option<Cow<'de, str>>>()?;
                }
                "instructions" | "system" => body.system = map.next_value::<Texts<'de>>()?.0,
                "tools" => body.tools = Some(map.next_value()?),
                "input" | "messages" => body.conversation = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(body)
    }
}

/// The texts of a content: a string, or the `text` of each part of a list
/// (a part without one counts by its `type`).
#[derive(Default)]
struct Texts<'a>(Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Texts<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextsVisitor<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for TextsVisitor<'a> {
            type Value = Texts<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of parts")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Texts<'a>, E> {
                Ok(Texts(vec![Cow::Borrowed(text)]))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Texts<'a>, E> {
                Ok(Texts(vec![Cow::Owned(text.to_owned())]))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Texts<'a>, E> {
                Ok(Texts::default())
            }

            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Texts<'a>, S::Error> {
                let mut texts = Vec::new();
                while let Some(part) = seq.next_element::<Part<'de>>()? {
                    if let Some(text) = part.text.or(part.kind) {
                        texts.push(text);
                    }
                }
                Ok(Texts(texts))
            }

            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Texts<'a>, M::Error> {
                let part = Part::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Texts(part.text.or(part.kind).into_iter().collect()))
            }
        }

        deserializer.deserialize_any(TextsVisitor(std::marker::PhantomData))
    }
}

/// A content part: its text, or its kind.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// The leading `system` and `developer` messages of a conversation, and
/// its first `user` message; the rest of it is skipped as it is read.
#[derive(Default)]
struct Leading<'a> {
    system: Vec<Cow<'a, str>>,
    first_user: Vec<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Leading<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LeadingVisitor<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for LeadingVisitor<'a> {
            type Value = Leading<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of messages")
            }

            // Responses `input` as a bare string: one user message.
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Leading<'a>, E> {
                let first_user = vec![Cow::Borrowed(text)];
                Ok(Leading {
                    system: Vec::new(),
                    first_user,
                })
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Leading<'a>, E> {
                let first_user = vec![Cow::Owned(text.to_owned())];
                Ok(Leading {
                    system: Vec::new(),
                    first_user,
                })
            }

            fn visit_unit<E: de::Error>(self) -> Result<Leading<'a>, E> {
                Ok(Leading::default())
            }

            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Leading<'a>, S::Error> {
                let mut leading = Leading::default();
                while let Some(message) = seq.next_element::<Message<'de>>()? {
                    match message.role.as_deref() {
                        Some("system" | "developer") => leading.system.extend(message.content.0),
                        Some("user") => {
                            leading.first_user = message.content.0;
                            break;
                        }
                        _ => {}
                    }
                }
                // What follows the first user message is not part of the
                // prefix: skipped, not kept.
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(leading)
            }
        }

        deserializer.deserialize_any(LeadingVisitor(std::marker::PhantomData))
    }
}

/// A message of a conversation: its role and the texts of its content.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Texts<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(body: &str) -> u64 {
        match prefix_digest(body.as_bytes()) {
            Some(PrefixDigest::Prefix(digest)) => digest,
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn the_stable_hash_is_the_same_in_every_process() {
        // Worked out apart from this code (FNV-1a over eight zero bytes,
        // then the finalizer). Written down once: a change here moves
        // every conversation of a running deployment to another replica.
        assert_eq!(StableHasher::hash_text(""), 0x7bd3_144f_29c0_cc9e);
        assert_ne!(StableHasher::hash_text("a"), StableHasher::hash_text("b"));
    }

    #[test]
    fn a_first_turn_and_its_stored_form_have_one_digest() {
        // Responses: the client's bare string, then the stored message
        // item with its id and a later turn after it.
        let first = r#"{"model":"m","instructions":"Be brief.","tools":[{"type":"function","name":"f"}],"input":"Hi"}"#;
        let later = r#"{"model":"m","instructions":"Be brief.","tools":[{"type":"function","name":"f"}],
            "input":[{"type":"message","id":"msg_1","role":"user","content":[{"type":"input_text","text":"Hi"}]},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]},
            {"role":"user","content":"And now?"}]}"#;
        assert_eq!(prefix(first), prefix(later));
        // Chat: the system message first, the content as a string or as
        // text parts.
        let chat = r#"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}"#;
        let chat_later = r#"{"messages":[{"role":"system","content":[{"type":"text","text":"Be brief."}]},
            {"role":"user","content":[{"type":"text","text":"Hi"}]},{"role":"assistant","content":"Hello"},
            {"role":"user","content":"more"}],"model":"m"}"#;
        assert_eq!(prefix(chat), prefix(chat_later));
    }

    #[test]
    fn another_first_message_or_system_prompt_is_another_digest() {
        let base = prefix(r#"{"instructions":"A","input":"Hi"}"#);
        assert_ne!(base, prefix(r#"{"instructions":"A","input":"Hello"}"#));
        assert_ne!(base, prefix(r#"{"instructions":"B","input":"Hi"}"#));
        assert_ne!(
            base,
            prefix(r#"{"instructions":"A","tools":[],"input":"Hi"}"#)
        );
        // The text moved from the system prompt into the message is not
        // the same prefix.
        assert_ne!(
            prefix(r#"{"instructions":"AB","input":""}"#),
            prefix(r#"{"instructions":"A","input":"B"}"#)
        );
    }

    #[test]
    fn a_prompt_cache_key_wins() {
        let keyed = |body: &str| prefix_digest(body.as_bytes());
        let one = keyed(r#"{"input":"Hi","prompt_cache_key":"k1"}"#);
        assert_eq!(one, Some(PrefixDigest::PromptCacheKey("k1".into())));
        assert_eq!(one, keyed(r#"{"prompt_cache_key":"k1","input":"other"}"#));
        assert_eq!(keyed("[1,2]"), None);
        assert_eq!(keyed("not json"), None);
    }
}
