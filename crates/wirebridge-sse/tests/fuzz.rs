//! Fuzz-style test over random bytes: no panics, split invariance, and
//! bounded memory under a small event size limit.

mod common;

use common::{decode_chunks, decode_whole, drain, Outcome, Rng};
use wirebridge_sse::{DecodeError, Decoder};

const CASES: u64 = 2000;
const LIMIT: usize = 64;

/// Random bytes skewed towards the ones the grammar cares about, often
/// grouped into field names so that events actually get dispatched.
fn random_input(rng: &mut Rng) -> Vec<u8> {
    const BYTES: &[u8] = b"\r\n:: datdaevnid0123456789\xEF\xBB\xBF\xC3\xA9\xF0\x9F\x98\x80\x00";
    const TOKENS: &[&[u8]] = &[
        b"data:",
        b"data: ",
        b"data",
        b"event: ",
        b"event:",
        b"id: ",
        b"retry: ",
        b": ",
        b"\n",
        b"\n\n",
        b"\r\n",
        b"\r",
        b"[DONE]",
        b"{\"a\":1}",
        "h\u{e9}llo \u{2713} \u{1F600}".as_bytes(),
    ];
    let len = rng.below(512);
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        match rng.below(8) {
            0 => out.push(rng.next_u64() as u8),
            1 => out.push(0x80 | rng.next_u64() as u8),
            2 | 3 => out.push(BYTES[rng.below(BYTES.len())]),
            _ => out.extend_from_slice(TOKENS[rng.below(TOKENS.len())]),
        }
    }
    out.truncate(len);
    out
}

/// Sometimes starts the input with a whole or partial byte order mark,
/// which is otherwise too unlikely to land at offset zero.
fn maybe_bom(rng: &mut Rng, mut input: Vec<u8>) -> Vec<u8> {
    let n = rng.below(8).min(3);
    input.splice(0..0, b"\xEF\xBB\xBF"[..n].iter().copied());
    input
}

#[test]
fn random_input_decodes_the_same_however_it_is_split() {
    let mut events = 0;
    for seed in 0..CASES {
        let mut rng = Rng::new(seed);
        let input = random_input(&mut rng);
        let input = maybe_bom(&mut rng, input);
        let whole = decode_whole(&input);
        events += whole.iter().filter(|r| r.is_ok()).count();
        for _ in 0..3 {
            let pieces = rng.split(&input);
            let split = decode_chunks(&mut Decoder::new(), pieces.iter().copied());
            assert_eq!(split, whole, "seed {seed}");
        }
    }
    // Guards against a generator that stops producing real events.
    assert!(events > CASES as usize / 4, "only {events} events decoded");
}

#[test]
fn small_limit_bounds_memory() {
    let mut errors = 0;
    for seed in 0..CASES {
        let mut rng = Rng::new(seed ^ 0xABCD);
        let input = random_input(&mut rng);
        let pieces = rng.split(&input);

        let mut decoder = Decoder::with_max_event_size(LIMIT);
        let mut out: Vec<Outcome> = Vec::new();
        let mut alive = true;
        for piece in &pieces {
            decoder.feed(piece);
            let bound = LIMIT + piece.len();
            assert!(decoder.buffered_len() <= bound, "seed {seed}");
            while alive {
                match decoder.next_event() {
                    None => break,
                    Some(Ok(event)) => out.push(Ok(event.into())),
                    Some(Err(err)) => {
                        alive = !err.is_fatal();
                        out.push(Err(err));
                    }
                }
                assert!(decoder.buffered_len() <= bound, "seed {seed}");
            }
            if !alive {
                break;
            }
        }
        if alive {
            alive = drain(&mut decoder, true, &mut out);
        }

        if alive {
            // Under the limit the small decoder behaves like any other.
            assert_eq!(out, decode_whole(&input), "seed {seed}");
        } else {
            errors += 1;
            assert_eq!(
                out.last(),
                Some(&Err(DecodeError::EventTooLarge { limit: LIMIT }))
            );
            assert_eq!(decoder.buffered_len(), 0);
        }
    }
    // Guards against a generator that never reaches the limit.
    assert!(
        errors > CASES as usize / 20,
        "only {errors} inputs hit the limit"
    );
}

#[test]
fn lines_longer_than_the_limit_are_rejected() {
    for seed in 0..CASES {
        let mut rng = Rng::new(seed.wrapping_add(77));
        // No line terminator, so the whole input is one unfinished line.
        let input: Vec<u8> = random_input(&mut rng)
            .into_iter()
            .filter(|&b| b != b'\r' && b != b'\n')
            .collect();
        let pieces = rng.split(&input);
        let mut decoder = Decoder::with_max_event_size(LIMIT);
        let mut rejected = false;
        for piece in &pieces {
            decoder.feed(piece);
            assert!(decoder.buffered_len() <= LIMIT + piece.len());
            match decoder.next_event() {
                None => {}
                Some(Err(DecodeError::EventTooLarge { limit: LIMIT })) => {
                    rejected = true;
                    break;
                }
                Some(other) => panic!("seed {seed}: {:?}", other.map(|e| e.data.to_owned())),
            }
        }
        let line_len = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&input).len();
        assert_eq!(rejected, line_len > LIMIT, "seed {seed}");
    }
}
