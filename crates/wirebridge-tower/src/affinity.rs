//! [`Affinity`]: which conversation an upstream request belongs to, so
//! that a router in front of several replicas of one backend can keep the
//! conversation on the replica that holds its prefix in cache.

use wirebridge_convert::affinity::{prefix_digest, PrefixDigest, StableHasher};

/// The conversation an upstream request continues, as a key: put in the
/// request's extensions by the translating layers, once per exchange, and
/// read by [`Replicas`](crate::Replicas) (or any router of an embedder's).
///
/// The key is the same in every process for the same conversation: the
/// `conversation` id when the request names one, else its
/// `prompt_cache_key`, else a digest of the stable prefix of the request
/// the backend is sent (system prompt, tools, first user message), which
/// every turn of a conversation repeats.
///
/// ```
/// use wirebridge_tower::{Affinity, AffinitySource};
///
/// let a = Affinity::conversation("conv_1");
/// assert_eq!(a, Affinity::conversation("conv_1"));
/// assert_eq!(a.source(), AffinitySource::Conversation);
/// assert_ne!(a.key(), Affinity::prompt_cache_key("conv_1").key());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Affinity {
    key: u64,
    source: AffinitySource,
}

/// What an [`Affinity`] was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AffinitySource {
    /// The `conversation` the request names.
    Conversation,
    /// The request's `prompt_cache_key`.
    PromptCacheKey,
    /// The digest of the request's stable prefix.
    Prefix,
    /// A key an embedder chose.
    Custom,
}

impl AffinitySource {
    /// Its name in logs: `conversation`, `prompt_cache_key`, `prefix`,
    /// `custom`.
    pub fn as_str(self) -> &'static str {
        match self {
            AffinitySource::Conversation => "conversation",
            AffinitySource::PromptCacheKey => "prompt_cache_key",
            AffinitySource::Prefix => "prefix",
            AffinitySource::Custom => "custom",
        }
    }
}

impl Affinity {
    /// A key of an embedder's own.
    pub fn custom(key: u64) -> Self {
        Self {
            key,
            source: AffinitySource::Custom,
        }
    }

    /// The key of a conversation id.
    pub fn conversation(id: &str) -> Self {
        Self {
            key: keyed(b"conversation", id),
            source: AffinitySource::Conversation,
        }
    }

    /// The key of a `prompt_cache_key`.
    pub fn prompt_cache_key(key: &str) -> Self {
        Self {
            key: keyed(b"prompt_cache_key", key),
            source: AffinitySource::PromptCacheKey,
        }
    }

    /// The key of a request body as the backend is sent it (in any of the
    /// three dialects): its `prompt_cache_key`, else the digest of its
    /// stable prefix. `None` for a body that is not a JSON object.
    pub fn of_body(body: &[u8]) -> Option<Self> {
        Some(match prefix_digest(body)? {
            PrefixDigest::PromptCacheKey(key) => Self::prompt_cache_key(&key),
            PrefixDigest::Prefix(digest) => Self {
                key: digest,
                source: AffinitySource::Prefix,
            },
        })
    }

    /// The key.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// What it was made from.
    pub fn source(&self) -> AffinitySource {
        self.source
    }
}

/// A text's key, apart from the same text of another kind.
fn keyed(kind: &[u8], text: &str) -> u64 {
    let mut hasher = StableHasher::new();
    hasher.field(kind);
    hasher.field(text.as_bytes());
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_s_prompt_cache_key_is_the_key_the_client_s_gives() {
        let body = br#"{"model":"m","prompt_cache_key":"session-7","messages":[]}"#;
        assert_eq!(
            Affinity::of_body(body),
            Some(Affinity::prompt_cache_key("session-7"))
        );
        let prefix = Affinity::of_body(br#"{"model":"m","input":"Hi"}"#).unwrap();
        assert_eq!(prefix.source(), AffinitySource::Prefix);
    }
}
