//! Ids for generated objects, with the prefixes the APIs use.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The length of a token: 128 bits in hex.
pub(crate) const STEM_LEN: usize = 32;

/// A fresh 128-bit hex token, unique within the process and unlikely to
/// repeat across processes (seeded from the OS through `RandomState`).
fn token() -> String {
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    let mut high = RandomState::new().build_hasher();
    high.write_u64(nanos);
    high.write_u64(count);
    // Sized up front: zero-padding is written a digit at a time, so a
    // token with leading zeros would otherwise grow the string more often.
    let mut token = String::with_capacity(STEM_LEN);
    let _ = write!(
        token,
        "{:016x}{:016x}",
        high.finish(),
        count ^ nanos.rotate_left(17)
    );
    token
}

/// The ids of one translated response: the response id, and item ids derived
/// from it so all ids of one response share a recognisable stem.
#[derive(Debug, Clone)]
pub struct ResponseIds {
    stem: String,
}

impl Default for ResponseIds {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseIds {
    /// Fresh ids.
    pub fn new() -> Self {
        Self { stem: token() }
    }

    /// `resp_…`.
    pub fn response(&self) -> String {
        self.compose("resp_", "", "", None)
    }

    /// `conv_…`: the id of a conversation made with these ids.
    pub fn conversation(&self) -> String {
        self.compose("conv_", "", "", None)
    }

    /// `msg_…`: the id of a Messages `message`.
    pub fn message(&self) -> String {
        self.compose("msg_", "", "", None)
    }

    /// `chatcmpl-…`.
    pub fn chat_completion(&self) -> String {
        self.compose("chatcmpl-", "", "", None)
    }

    /// An item id: `msg_…`, `fc_…`, `ctc_…`, `rs_…`, unique per output index.
    pub fn item(&self, prefix: &str, output_index: usize) -> String {
        self.compose(prefix, "_", "", Some(output_index))
    }

    /// The id of the `n`th input item of the request, for one sent without
    /// an id: distinct from every output item's.
    pub fn input_item(&self, prefix: &str, n: usize) -> String {
        self.compose(prefix, "_", "in", Some(n))
    }

    /// The response an item id of these ids belongs to: `resp_` and the
    /// stem after the item's prefix (`msg_…`, `fc_…`, …). `None` for an id
    /// not made here, such as one a client chose.
    pub fn response_of(item_id: &str) -> Option<String> {
        let (_, rest) = item_id.split_once('_')?;
        let stem = rest.get(..STEM_LEN)?;
        stem.bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| format!("resp_{stem}"))
    }

    /// A call id for a tool call that arrived without one.
    pub fn call(&self, index: usize) -> String {
        self.compose("call_", "", "", Some(index))
    }

    /// `head`, `sep`, the stem, `infix`, and `n` in four hex digits or
    /// more: written by hand, as `format!` took about a thousand
    /// instructions an id, and every reply makes several.
    fn compose(&self, head: &str, sep: &str, infix: &str, n: Option<usize>) -> String {
        let mut id = String::with_capacity(head.len() + sep.len() + STEM_LEN + infix.len() + 16);
        id.push_str(head);
        id.push_str(sep);
        id.push_str(&self.stem);
        id.push_str(infix);
        if let Some(n) = n {
            let digits = usize::BITS
                .saturating_sub(n.leading_zeros())
                .div_ceil(4)
                .max(4);
            for shift in (0..digits).rev() {
                let nibble = (n >> (shift * 4)) & 0xf;
                id.push(char::from_digit(nibble as u32, 16).expect("a nibble"));
            }
        }
        id
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let a = ResponseIds::new();
        let b = ResponseIds::new();
        assert_ne!(a.response(), b.response());
        assert!(a.response().starts_with("resp_"));
        assert_ne!(a.item("msg", 0), a.item("msg", 1));
        assert!(a.chat_completion().starts_with("chatcmpl-"));
        assert_ne!(a.input_item("msg", 0), a.item("msg", 0));
    }

    #[test]
    fn ids_read_as_their_format() {
        let ids = ResponseIds::new();
        let stem = &ids.stem;
        assert_eq!(ids.response(), format!("resp_{stem}"));
        assert_eq!(ids.conversation(), format!("conv_{stem}"));
        assert_eq!(ids.message(), format!("msg_{stem}"));
        assert_eq!(ids.chat_completion(), format!("chatcmpl-{stem}"));
        for n in [0, 7, 0xab, 0xffff, 0x1_0000, 0xabc_def0, usize::MAX] {
            assert_eq!(ids.item("fc", n), format!("fc_{stem}{n:04x}"));
            assert_eq!(ids.input_item("msg", n), format!("msg_{stem}in{n:04x}"));
            assert_eq!(ids.call(n), format!("call_{stem}{n:04x}"));
        }
    }

    #[test]
    fn an_item_id_names_its_response() {
        let ids = ResponseIds::new();
        let response = Some(ids.response());
        assert_eq!(ResponseIds::response_of(&ids.item("msg", 3)), response);
        assert_eq!(ResponseIds::response_of(&ids.item("fc", 0)), response);
        assert_eq!(
            ResponseIds::response_of(&ids.input_item("fco", 1)),
            response
        );
        for foreign in ["msg_1", "item-abc", "fc_zz", "", "_", "msg_ü"] {
            assert_eq!(ResponseIds::response_of(foreign), None, "{foreign}");
        }
    }
}
