//! W3C Trace Context: the `traceparent` header.
//!
//! The layers forward every request header, `traceparent` and `tracestate`
//! included, and report the trace id of a request's `traceparent` in its
//! [`Exchange`](crate::Exchange). A proxy that takes part in the trace, as
//! `wirebridge serve` does, continues it with [`TraceParent::child`] (or
//! starts one with [`TraceParent::start`]) before the request reaches the
//! layer.
//!
//! ```
//! use wirebridge_tower::trace_context::TraceParent;
//!
//! let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
//! let parent = TraceParent::parse(incoming.as_bytes()).unwrap();
//! let ours = parent.child();
//! assert_eq!(ours.trace_id(), parent.trace_id());
//! assert_ne!(ours.parent_id(), parent.parent_id());
//! assert_eq!(ours.to_string().len(), incoming.len());
//! assert!(ours.sampled());
//! ```

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use http::{HeaderMap, HeaderName, HeaderValue};

/// The header's name.
pub const TRACEPARENT: &str = "traceparent";

/// The header's name, as a [`HeaderName`]: looking a header up by its
/// text parses the text first.
pub const TRACEPARENT_HEADER: HeaderName = HeaderName::from_static(TRACEPARENT);

/// A trace's id: 16 bytes, never all zero; shown as 32 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId([u8; 16]);

/// A span's id: 8 bytes, never all zero; shown as 16 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId([u8; 8]);

/// A parsed `traceparent`: the trace, the caller's span, and the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    trace_id: TraceId,
    parent_id: SpanId,
    flags: u8,
}

/// The `sampled` bit of the flags.
const SAMPLED: u8 = 0x01;

impl TraceParent {
    /// Parses a header value. Versions above `00` are read as `00` (their
    /// first four fields have the same shape; anything after must follow a
    /// `-`), and version `ff`, an all-zero id, or any upper-case hex makes
    /// it invalid: `None`, and the trace is started afresh.
    pub fn parse(value: &[u8]) -> Option<Self> {
        if value.len() < 55 {
            return None;
        }
        let version = hex_byte(&value[0..2])?;
        if version == 0xff || (version == 0 && value.len() != 55) {
            return None;
        }
        if value[2] != b'-' || value[35] != b'-' || value[52] != b'-' {
            return None;
        }
        if value.len() > 55 && value[55] != b'-' {
            return None;
        }
        let mut trace_id = [0; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(&value[3 + 2 * i..5 + 2 * i])?;
        }
        let mut parent_id = [0; 8];
        for (i, byte) in parent_id.iter_mut().enumerate() {
            *byte = hex_byte(&value[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&value[53..55])?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id: TraceId(trace_id),
            parent_id: SpanId(parent_id),
            flags,
        })
    }

    /// The valid `traceparent` of `headers`, if there is exactly one.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let mut values = headers.get_all(TRACEPARENT_HEADER).iter();
        let value = values.next()?;
        if values.next().is_some() {
            return None;
        }
        Self::parse(value.as_bytes())
    }

    /// A new trace, with a new span of it, sampled: a backend that records
    /// traces records this one.
    pub fn start() -> Self {
        let high = random_u64().to_be_bytes();
        let low = random_u64().to_be_bytes();
        let mut trace_id = [0; 16];
        trace_id[..8].copy_from_slice(&high);
        trace_id[8..].copy_from_slice(&low);
        if trace_id == [0; 16] {
            trace_id[15] = 1;
        }
        Self {
            trace_id: TraceId(trace_id),
            parent_id: new_span_id(),
            flags: SAMPLED,
        }
    }

    /// The same trace and flags, with a new span id: what this hop sends
    /// on as the parent of the next.
    pub fn child(&self) -> Self {
        Self {
            parent_id: new_span_id(),
            ..*self
        }
    }

    /// The trace's id.
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// The id of the span that sent it.
    pub fn parent_id(&self) -> SpanId {
        self.parent_id
    }

    /// Whether the caller may have recorded the trace.
    pub fn sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// As a header value (version `00`).
    pub fn to_header_value(&self) -> HeaderValue {
        HeaderValue::from_bytes(&self.text()).expect("hex digits and dashes")
    }

    /// The header's text: `00-{trace id}-{parent id}-{flags}`, written
    /// straight into place (it is made for every request).
    fn text(&self) -> [u8; 55] {
        let mut text = [b'-'; 55];
        text[..2].copy_from_slice(b"00");
        hex_into(&self.trace_id.0, &mut text[3..35]);
        hex_into(&self.parent_id.0, &mut text[36..52]);
        hex_into(&[self.flags], &mut text[53..55]);
        text
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.text()).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex::<32>(&self.0, f)
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex::<16>(&self.0, f)
    }
}

/// `bytes` as `N` lowercase hex digits, in one write (the trace id is in
/// every exchange's log line).
fn write_hex<const N: usize>(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut text = [0u8; N];
    hex_into(bytes, &mut text);
    f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
}

/// Writes `bytes` as lowercase hex digits into `out` (twice as long).
fn hex_into(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0xf)];
    }
}

/// Two lowercase hex digits.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(pair[0])? << 4 | digit(pair[1])?)
}

fn new_span_id() -> SpanId {
    let mut id = random_u64();
    if id == 0 {
        id = 1;
    }
    SpanId(id.to_be_bytes())
}

/// Unpredictable enough for ids that need only be unique: SipHash keyed
/// from the OS (through `RandomState`) over a process-wide counter. Trace
/// ids protect nothing, so no cryptographic generator is needed.
pub(crate) fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specs_example_reads_and_writes_back() {
        let parent = TraceParent::parse(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(parent.to_string(), EXAMPLE);
        assert_eq!(parent.to_header_value(), EXAMPLE);
        assert_eq!(
            parent.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(parent.parent_id().to_string(), "00f067aa0ba902b7");
        assert!(parent.sampled());
    }

    #[test]
    fn invalid_values_are_refused() {
        let bad = [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            // Upper case, all-zero ids, version ff, a longer version 00.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
        ];
        for value in bad {
            assert_eq!(TraceParent::parse(value.as_bytes()), None, "{value}");
        }
    }

    #[test]
    fn a_later_version_is_read_as_version_00() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next";
        let parent = TraceParent::parse(later.as_bytes()).unwrap();
        assert_eq!(parent.to_string(), EXAMPLE);
    }

    #[test]
    fn two_traceparent_headers_are_none() {
        let mut headers = HeaderMap::new();
        headers.append(TRACEPARENT, HeaderValue::from_static(EXAMPLE));
        assert!(TraceParent::from_headers(&headers).is_some());
        headers.append(TRACEPARENT, HeaderValue::from_static(EXAMPLE));
        assert_eq!(TraceParent::from_headers(&headers), None);
    }

    #[test]
    fn started_traces_and_children_have_fresh_ids() {
        let a = TraceParent::start();
        let b = TraceParent::start();
        assert_ne!(a.trace_id(), b.trace_id());
        assert!(a.sampled());
        let child = a.child();
        assert_eq!(child.trace_id(), a.trace_id());
        assert_ne!(child.parent_id(), a.parent_id());
        let round = TraceParent::parse(child.to_string().as_bytes()).unwrap();
        assert_eq!(round, child);
    }
}
