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
///
/// The texts are hashed as they are decoded, straight from the body: how
/// long they are, and how they are escaped, changes neither the work beyond
/// one pass nor what is allocated.
pub fn prefix_digest(body: &[u8]) -> Option<PrefixDigest> {
    let read: Body<'_> = serde_json::from_slice(body).ok()?;
    if let Some(key) = read.prompt_cache_key {
        return Some(PrefixDigest::PromptCacheKey(key.into_owned()));
    }
    let mut hasher = StableHasher::new();
    hasher.write(b"system");
    if let Some(system) = read.system {
        hash_texts(&mut hasher, system)?;
    }
    hasher.write(b"leading");
    for content in &read.conversation.system {
        hash_texts(&mut hasher, content)?;
    }
    hasher.write(b"tools");
    if let Some(tools) = read.tools {
        hasher.field(tools.get().as_bytes());
    }
    hasher.write(b"user");
    match &read.conversation.first_user {
        Some(Text::Content(content)) => hash_texts(&mut hasher, content)?,
        Some(Text::Decoded(text)) => hasher.field(text.as_bytes()),
        None => {}
    }
    Some(PrefixDigest::Prefix(hasher.finish()))
}

/// Hashes the texts of a content as it stands in the body: a string, or
/// the `text` of each part of a list (a part without one counts by its
/// `type`). `None` for a content of another shape.
fn hash_texts(hasher: &mut StableHasher, content: &RawValue) -> Option<()> {
    let raw = content.get();
    match raw.as_bytes().first()? {
        b'"' => hash_json_string(hasher, raw),
        b'[' => {
            let parts: Vec<Part<'_>> = serde_json::from_str(raw).ok()?;
            for part in parts {
                if let Some(text) = part.text.or(part.kind) {
                    hash_json_string(hasher, text.get())?;
                }
            }
            Some(())
        }
        b'n' => Some(()),
        _ => None,
    }
}

/// Hashes a JSON string token (quotes and escapes as written) as
/// [`StableHasher::field`] hashes its decoded text, decoding as it goes.
fn hash_json_string(hasher: &mut StableHasher, token: &str) -> Option<()> {
    let inner = token.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    let mut length = 0u64;
    let mut i = 0;
    while i < inner.len() {
        // Runs without escapes, as they are.
        let run = inner[i..]
            .iter()
            .position(|&b| b == b'\\')
            .unwrap_or(inner.len() - i);
        hasher.write(&inner[i..i + run]);
        length += run as u64;
        i += run;
        if i >= inner.len() {
            break;
        }
        let decoded = match *inner.get(i + 1)? {
            b'u' => {
                let unit = hex4(inner.get(i + 2..i + 6)?)?;
                i += 6;
                let low = (0xD800..0xDC00)
                    .contains(&unit)
                    .then(|| {
                        let next = inner.get(i..i + 6)?;
                        let low = hex4(next.strip_prefix(b"\\u")?)?;
                        (0xDC00..0xE000).contains(&low).then_some(low)
                    })
                    .flatten();
                let code = match low {
                    Some(low) => {
                        i += 6;
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    None => unit,
                };
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            escaped => {
                i += 2;
                match escaped {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    _ => return None,
                }
            }
        };
        let mut buffer = [0; 4];
        let bytes = decoded.encode_utf8(&mut buffer).as_bytes();
        hasher.write(bytes);
        length += bytes.len() as u64;
    }
    hasher.write(&length.to_le_bytes());
    Some(())
}

/// Four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(digits).ok()?;
    (text.len() == 4).then_some(())?;
    u32::from_str_radix(text, 16).ok()
}

/// The parts of a request body the digest reads; the rest is skipped
/// without being kept.
#[derive(Default)]
struct Body<'a> {
    prompt_cache_key: Option<Cow<'a, str>>,
    /// `instructions` (Responses) or `system` (Messages).
    system: Option<&'a RawValue>,
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
                "instructions" | "system" => body.system = Some(map.next_value()?),
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

/// A content part: its text, or its kind, as JSON string tokens.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<&'a RawValue>,
}

/// The first user message's text: its content as written, or a bare
/// string `input` (Responses), decoded.
enum Text<'a> {
    Content(&'a RawValue),
    Decoded(Cow<'a, str>),
}

/// The contents of the leading `system` and `developer` messages of a
/// conversation, and of its first `user` message; the rest of it is
/// skipped as it is read.
#[derive(Default)]
struct Leading<'a> {
    system: Vec<&'a RawValue>,
    first_user: Option<Text<'a>>,
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
                Ok(Leading {
                    system: Vec::new(),
                    first_user: Some(Text::Decoded(Cow::Borrowed(text))),
                })
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Leading<'a>, E> {
                Ok(Leading {
                    system: Vec::new(),
                    first_user: Some(Text::Decoded(Cow::Owned(text.to_owned()))),
                })
            }

            fn visit_unit<E: de::Error>(self) -> Result<Leading<'a>, E> {
                Ok(Leading::default())
            }

            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Leading<'a>, S::Error> {
                let mut leading = Leading::default();
                while let Some(message) = seq.next_element::<Message<'de>>()? {
                    let Some(content) = message.content else {
                        continue;
                    };
                    match message.role.as_deref() {
                        Some("system" | "developer") => leading.system.push(content),
                        Some("user") => {
                            leading.first_user = Some(Text::Content(content));
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

/// A message of a conversation: its role and its content as written.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
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
    fn a_text_escaped_otherwise_is_the_same_text() {
        // A bare string decoded by the parser, a content token decoded as
        // it is hashed, a text part: one text, however it is escaped.
        let bare = prefix(r#"{"instructions":"S\/1","input":"caf\u00e9 \"x\"\n\ud83d\ude00"}"#);
        let token = prefix(
            r#"{"instructions":"S/1","input":[{"role":"user","content":"café \"x\"\u000a😀"}]}"#,
        );
        let part = prefix(
            r#"{"instructions":"S\u002f1","input":[{"role":"user","content":[{"type":"input_text","text":"caf\u00E9 \u0022x\u0022\n\ud83d\ude00"}]}]}"#,
        );
        assert_eq!(bare, token);
        assert_eq!(bare, part);
        assert_ne!(
            bare,
            prefix(r#"{"instructions":"S/1","input":"cafe \"x\"\n\ud83d\ude00"}"#)
        );
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
