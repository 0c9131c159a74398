//! Encoding then decoding gives the events back.

mod common;

use common::{decode_chunks, decode_whole, OwnedEvent, Rng};
use wirebridge_sse::{encode_comment, encode_data, encode_done, encode_event, Decoder};

fn roundtrip(events: &[(Option<&str>, &str)]) -> Vec<OwnedEvent> {
    let mut wire = Vec::new();
    for (i, (name, data)) in events.iter().enumerate() {
        if i % 2 == 1 {
            encode_comment(&mut wire, "keepalive");
        }
        encode_event(&mut wire, *name, data);
    }
    decode_whole(&wire)
        .into_iter()
        .map(|r| r.expect("encoder output must decode"))
        .collect()
}

#[test]
fn hand_picked_events() {
    let events = [
        (
            Some("response.output_text.delta"),
            r#"{"delta":"h\u00e9llo"}"#,
        ),
        (None, "h\u{e9}llo \u{2713} \u{1F600}"),
        (None, ""),
        (None, "two\nlines"),
        (None, "\n"),
        (None, "\n\nleading and trailing\n\n"),
        (None, " leading space"),
        (None, "data: looks like a field"),
        (None, ": looks like a comment\n: and again"),
        (Some("x"), ""),
        (None, "[DONE]"),
    ];
    let decoded = roundtrip(&events);
    let expected: Vec<_> = events
        .iter()
        .map(|(name, data)| OwnedEvent {
            event: name.map(str::to_owned),
            ..OwnedEvent::data(data)
        })
        .collect();
    assert_eq!(decoded, expected);
}

#[test]
fn line_breaks_come_back_as_lf() {
    let decoded = roundtrip(&[(None, "a\r\nb\rc\nd\r")]);
    assert_eq!(decoded, [OwnedEvent::data("a\nb\nc\nd\n")]);
}

#[test]
fn chat_framing() {
    let mut wire = Vec::new();
    encode_data(&mut wire, r#"{"choices":[]}"#);
    encode_comment(&mut wire, "");
    encode_done(&mut wire);
    let decoded = decode_whole(&wire);
    assert_eq!(
        decoded,
        [
            Ok(OwnedEvent::data(r#"{"choices":[]}"#)),
            Ok(OwnedEvent::data("[DONE]")),
        ]
    );
}

#[test]
fn random_events() {
    const PIECES: &[&str] = &[
        "a",
        " ",
        ":",
        "\n",
        "\r",
        "\r\n",
        "data: ",
        "{\"k\":\"v\"}",
        "\u{e9}",
        "\u{1F600}",
        "[DONE]",
    ];
    const NAMES: &[&str] = &[
        "message",
        "response.created",
        "response.output_text.delta",
        "e:v",
    ];
    for seed in 0..500 {
        let mut rng = Rng::new(seed);
        let count = 1 + rng.below(8);
        let mut originals = Vec::new();
        for _ in 0..count {
            let name = match rng.below(3) {
                0 => None,
                _ => Some(NAMES[rng.below(NAMES.len())]),
            };
            let data: String = (0..rng.below(12))
                .map(|_| PIECES[rng.below(PIECES.len())])
                .collect();
            originals.push((name, data));
        }

        let mut wire = Vec::new();
        for (name, data) in &originals {
            encode_event(&mut wire, *name, data);
        }
        let pieces = rng.split(&wire);
        let decoded: Vec<_> = decode_chunks(&mut Decoder::new(), pieces.iter().copied())
            .into_iter()
            .map(Result::unwrap)
            .collect();

        let expected: Vec<_> = originals
            .iter()
            .map(|(name, data)| OwnedEvent {
                event: name.map(str::to_owned),
                ..OwnedEvent::data(&data.replace("\r\n", "\n").replace('\r', "\n"))
            })
            .collect();
        assert_eq!(decoded, expected, "seed {seed}");
    }
}
