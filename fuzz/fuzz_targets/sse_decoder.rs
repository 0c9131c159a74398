//! The SSE decoder over arbitrary bytes, split at points the input chooses.
//!
//! Checks, beyond not panicking:
//! * the events (and per-event errors) are the same however the input is
//!   split, compared with one-shot decoding;
//! * with a small event size limit (16 B to 4 KiB, chosen by the options
//!   byte), the bytes held stay within the limit plus the last piece after
//!   every call, events before an `EventTooLarge` are the same as without a
//!   limit, and a poisoned decoder holds nothing; a stream that never hits
//!   the limit decodes as without one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_fuzz::StreamInput;
use wirebridge_sse::{DecodeError, Decoder, Event};

/// An owned copy of an [`Event`], so outcomes outlive the decoder's borrow.
#[derive(Debug, PartialEq, Eq)]
struct Owned {
    event: Option<String>,
    data: String,
    id: Option<String>,
    retry: Option<u64>,
}

impl From<Event<'_>> for Owned {
    fn from(e: Event<'_>) -> Self {
        Owned {
            event: e.event.map(str::to_owned),
            data: e.data.to_owned(),
            id: e.id.map(str::to_owned),
            retry: e.retry,
        }
    }
}

type Outcome = Result<Owned, DecodeError>;

/// Event size limits small enough that the fuzzer's inputs reach them.
const LIMITS: [usize; 4] = [16, 64, 256, 4096];

/// Decodes `pieces`, draining after every piece as a caller must, then
/// finishes. Stops at the first fatal error, which a poisoned decoder would
/// repeat forever. After every call the bytes held must stay within the
/// limit plus the last piece.
fn decode(decoder: &mut Decoder, pieces: &[&[u8]]) -> Vec<Outcome> {
    let limit = decoder.max_event_size();
    let mut out = Vec::new();
    let mut last = 0;
    for piece in pieces.iter().map(Some).chain([None]) {
        if let Some(piece) = piece {
            decoder.feed(piece);
            last = piece.len();
        }
        loop {
            let next = match piece {
                Some(_) => decoder.next_event(),
                None => decoder.finish(),
            };
            let fatal = match next {
                None => break,
                Some(Ok(event)) => {
                    out.push(Ok(event.into()));
                    false
                }
                Some(Err(err)) => {
                    let fatal = err.is_fatal();
                    out.push(Err(err));
                    fatal
                }
            };
            let held = decoder.buffered_len();
            assert!(
                held <= limit.saturating_add(last),
                "{held} bytes held with a {limit}-byte limit and a {last}-byte piece"
            );
            if fatal {
                return out;
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let input = StreamInput::parse(data);
    let pieces = input.pieces();

    let whole = decode(&mut Decoder::new(), &[input.stream]);
    let split = decode(&mut Decoder::new(), &pieces);
    assert_eq!(split, whole, "split differently, decoded differently");

    let limit = LIMITS[usize::from(input.options) % LIMITS.len()];
    let mut small = Decoder::with_max_event_size(limit);
    let bounded = decode(&mut small, &pieces);
    match bounded.split_last() {
        Some((Err(DecodeError::EventTooLarge { limit: l }), before)) => {
            assert_eq!(*l, limit);
            assert_eq!(small.buffered_len(), 0, "a poisoned decoder holds bytes");
            assert!(
                whole.starts_with(before),
                "events before the limit differ from those without one"
            );
        }
        _ => assert_eq!(bounded, whole, "under its limit, the decoder differs"),
    }
});
