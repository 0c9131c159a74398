//! The catalog's entity tag: what Codex keeps with its cached catalog, and
//! compares with the `x-models-etag` of each connection it opens to learn
//! whether the catalog changed since it read it.
//!
//! Codex reads the tag from the catalog reply's `ETag` (and, failing that,
//! from the body's `etag`); the bridge sends it as `X-Models-Etag` too, the
//! name Codex reads it under from a WebSocket upgrade or a Responses reply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use http::{header, HeaderMap, HeaderValue};
use wirebridge_convert::affinity::StableHasher;
use wirebridge_convert::catalog::CatalogModel;

/// Header naming the catalog's current entity tag, on the catalog reply and
/// on the WebSocket upgrade.
pub const MODELS_ETAG_HEADER: &str = "x-models-etag";

/// The entity tag of a catalog body: a hash of its bytes, so the tag
/// changes exactly when the catalog does, and every process (every
/// replica of the bridge) serving the same catalog gives the same tag.
pub(crate) fn of(body: &[u8]) -> String {
    let mut hasher = StableHasher::new();
    hasher.field(body);
    format!("\"{:016x}\"", hasher.finish())
}

/// Whether an `If-None-Match` request header matches `etag`: `*`, or one of
/// its listed tags, compared weakly (RFC 9110 §13.1.2: a `W/` prefix is
/// ignored).
pub(crate) fn matches(headers: &HeaderMap, etag: &str) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let wanted = opaque(etag);
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|tag| tag.trim() == "*" || opaque(tag) == wanted)
}

/// Writes the tag in both headers Codex reads it from.
pub(crate) fn insert(headers: &mut HeaderMap, etag: &str) {
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, value.clone());
        headers.insert(MODELS_ETAG_HEADER, value);
    }
}

/// What the catalog said when it was last served: the WebSocket upgrade,
/// which asks the upstream nothing, repeats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Served {
    /// The tag of the catalog served last.
    pub(crate) etag: String,
    /// The one model the catalog listed, when it listed exactly one: the
    /// backend's model whatever a client asks for.
    pub(crate) sole_model: Option<String>,
}

impl Served {
    /// What a catalog of `models`, whose body has `etag`, says.
    pub(crate) fn new(etag: String, models: &[CatalogModel]) -> Self {
        let sole_model = match models {
            [only] => Some(only.id.clone()),
            _ => None,
        };
        Self { etag, sole_model }
    }
}

/// Most credentials whose last catalog is kept: past it, one of them is
/// forgotten (its next upgrade names no catalog until it reads one again).
const MAX_HOLDERS: usize = 1024;

/// Who a catalog was served to: a digest of the request's credential. The
/// upstream may list other models for another credential, and one
/// credential's catalog is not told to another's connection.
pub(crate) fn holder(headers: &HeaderMap) -> String {
    wirebridge_store::tenant_key(
        headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
    )
}

/// The last [`Served`] catalog of each [`holder`], shared by a layer's
/// clones.
#[derive(Debug, Clone, Default)]
pub(crate) struct LastServed(Arc<Mutex<HashMap<String, Served>>>);

impl LastServed {
    /// Records the catalog just served to `holder`.
    pub(crate) fn set(&self, holder: String, served: Served) {
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if last.len() >= MAX_HOLDERS && !last.contains_key(&holder) {
            if let Some(any) = last.keys().next().cloned() {
                last.remove(&any);
            }
        }
        last.insert(holder, served);
    }

    /// The catalog served last to `holder`, if one was.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) fn get(&self, holder: &str) -> Option<Served> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(holder)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn the_tag_is_a_quoted_hash_of_the_body_that_changes_with_it() {
        let tag = of(br#"{"models":[]}"#);
        assert_eq!(tag.len(), 18);
        assert!(tag.starts_with('"') && tag.ends_with('"'));
        assert_eq!(tag, of(br#"{"models":[]}"#));
        assert_ne!(tag, of(br#"{"models":[{}]}"#));
    }

    #[test]
    fn each_credential_has_its_last_catalog_and_the_count_is_bounded() {
        let served = |etag: &str| Served {
            etag: etag.into(),
            sole_model: None,
        };
        let mut a = HeaderMap::new();
        a.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        let mut b = HeaderMap::new();
        b.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer b"));
        let last = LastServed::default();
        last.set(holder(&a), served("\"1\""));
        assert_eq!(last.get(&holder(&a)), Some(served("\"1\"")));
        assert_eq!(last.get(&holder(&b)), None);
        assert_eq!(last.get(&holder(&HeaderMap::new())), None);
        last.set(holder(&a), served("\"2\""));
        assert_eq!(last.get(&holder(&a)), Some(served("\"2\"")));
        for i in 0..MAX_HOLDERS + 10 {
            last.set(format!("holder-{i}"), served("\"3\""));
        }
        assert_eq!(last.0.lock().unwrap().len(), MAX_HOLDERS);
    }

    #[test]
    fn if_none_match_matches_the_tag_in_a_list_weakly_or_as_a_star() {
        let tag = "\"00000000000000ab\"";
        assert!(matches(&asking(&[tag]), tag));
        assert!(matches(&asking(&["\"x\", W/\"00000000000000ab\""]), tag));
        assert!(matches(&asking(&["\"x\"", tag]), tag));
        assert!(matches(&asking(&["*"]), tag));
        assert!(!matches(&asking(&["\"00000000000000ac\""]), tag));
        assert!(!matches(&asking(&[]), tag));
    }
}
