//! Steady-state decoding must not allocate per event.

use wirebridge_sse::{encode_comment, encode_data, encode_done, encode_event, Decoder};
use wirebridge_testkit::{allocations, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const EVENTS: usize = 10_000;

/// A stream mixing every code path: names, ids, comments, multi-line data,
/// CRLF line ends and the Chat sentinel.
fn stream() -> Vec<u8> {
    let deltas = ["h\u{e9}llo", " \u{2713}", " \u{1F600}", " world", ""];
    let mut out = Vec::new();
    for i in 0..EVENTS {
        let delta = deltas[i % deltas.len()];
        match i % 5 {
            0 => {
                out.extend_from_slice(format!("id: evt_{}\n", i % 1000).as_bytes());
                encode_event(
                    &mut out,
                    Some("response.output_text.delta"),
                    &format!(r#"{{"type":"response.output_text.delta","delta":"{delta}"}}"#),
                );
            }
            1 => encode_data(
                &mut out,
                &format!(r#"{{"choices":[{{"delta":{{"content":"{delta}"}}}}]}}"#),
            ),
            2 => {
                encode_comment(&mut out, "keepalive");
                encode_data(&mut out, &format!("line one {delta}\nline two"));
            }
            3 => {
                let text = format!(
                    "event: response.output_text.done\r\ndata: {{\"text\":\"{delta}\"}}\r\n\r\n"
                );
                out.extend_from_slice(text.as_bytes());
            }
            _ => encode_done(&mut out),
        }
    }
    out
}

/// Chunk lengths from a xorshift generator, as a network might deliver.
fn chunk_lengths(total: usize) -> Vec<usize> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut lengths = Vec::new();
    let mut covered = 0;
    while covered < total {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let n = (1 + (state % 300) as usize).min(total - covered);
        lengths.push(n);
        covered += n;
    }
    lengths
}

/// Decodes the whole stream; returns the event count and a checksum that
/// keeps the work from being optimised away.
fn decode(decoder: &mut Decoder, stream: &[u8], lengths: &[usize]) -> (usize, usize) {
    let (mut events, mut checksum) = (0, 0);
    let mut rest = stream;
    for &n in lengths {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        decoder.feed(chunk);
        while let Some(event) = decoder.next_event() {
            let event = event.expect("valid stream");
            events += 1;
            checksum += event.data.len() + event.event.map_or(0, str::len);
            checksum += event.id.map_or(0, str::len) + usize::from(event.is_done());
        }
    }
    (events, checksum)
}

#[test]
fn steady_state_decoding_does_not_allocate() {
    let stream = stream();
    let lengths = chunk_lengths(stream.len());
    let mut decoder = Decoder::new();

    // The first pass sizes the buffers for the largest event and chunk.
    let warm_up = decode(&mut decoder, &stream, &lengths);
    assert_eq!(warm_up.0, EVENTS);

    let before = allocations();
    let measured = decode(&mut decoder, &stream, &lengths);
    let made = allocations() - before;

    assert_eq!(measured, warm_up);
    assert_eq!(made, 0, "{made} allocations for {EVENTS} events");
}
