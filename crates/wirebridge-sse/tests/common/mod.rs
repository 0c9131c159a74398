//! Helpers shared by the integration tests.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use wirebridge_sse::{DecodeError, Decoder, Event};

/// An owned copy of an [`Event`], so results outlive the decoder borrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
    pub retry: Option<u64>,
}

impl From<Event<'_>> for OwnedEvent {
    fn from(e: Event<'_>) -> Self {
        OwnedEvent {
            event: e.event.map(str::to_owned),
            data: e.data.to_owned(),
            id: e.id.map(str::to_owned),
            retry: e.retry,
        }
    }
}

impl OwnedEvent {
    pub fn data(data: &str) -> Self {
        OwnedEvent {
            event: None,
            data: data.to_owned(),
            id: None,
            retry: None,
        }
    }

    pub fn named(event: &str, data: &str) -> Self {
        OwnedEvent {
            event: Some(event.to_owned()),
            ..OwnedEvent::data(data)
        }
    }
}

pub type Outcome = Result<OwnedEvent, DecodeError>;

/// Drains `decoder` into `out`; returns `false` once a fatal error is seen,
/// because a poisoned decoder would repeat it forever.
pub fn drain(decoder: &mut Decoder, finish: bool, out: &mut Vec<Outcome>) -> bool {
    loop {
        let next = if finish {
            decoder.finish()
        } else {
            decoder.next_event()
        };
        match next {
            None => return true,
            Some(Ok(event)) => out.push(Ok(event.into())),
            Some(Err(err)) => {
                let fatal = err.is_fatal();
                out.push(Err(err));
                if fatal {
                    return false;
                }
            }
        }
    }
}

/// Decodes `chunks` in order, then finishes the stream.
pub fn decode_chunks<'a>(
    decoder: &mut Decoder,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Outcome> {
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        if !drain(decoder, false, &mut out) {
            return out;
        }
    }
    drain(decoder, true, &mut out);
    out
}

/// Decodes `input` fed in one piece with the default limit.
pub fn decode_whole(input: &[u8]) -> Vec<Outcome> {
    decode_chunks(&mut Decoder::new(), [input])
}

/// Decodes a string fed in one piece, expecting no errors.
pub fn decode_ok(input: &str) -> Vec<OwnedEvent> {
    decode_whole(input.as_bytes())
        .into_iter()
        .map(|r| r.expect("decoding failed"))
        .collect()
}

/// A xorshift64 generator: deterministic and dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // Zero is the one state xorshift never leaves.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n`; `n` must be non-zero.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Cuts `input` into pieces, favouring tiny ones since they hit the
    /// most boundary cases.
    pub fn split<'a>(&mut self, input: &'a [u8]) -> Vec<&'a [u8]> {
        let max_piece = match self.below(4) {
            0 => 1,
            1 => 3,
            2 => 16,
            _ => input.len().max(1),
        };
        let mut pieces = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let n = (1 + self.below(max_piece)).min(rest.len());
            let (piece, tail) = rest.split_at(n);
            pieces.push(piece);
            rest = tail;
        }
        pieces
    }
}
