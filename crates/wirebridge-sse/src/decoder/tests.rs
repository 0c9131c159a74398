//! Unit tests of the decoder's internals: where event data lives, when
//! input is moved and scanned, and what poisoning frees.

use super::*;

fn collect(decoder: &mut Decoder) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(event) = decoder.next_event() {
        out.push(event.unwrap().data.to_owned());
    }
    out
}

#[test]
fn single_line_data_is_not_copied() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: abc\n");
    assert!(decoder.next_event().is_none());
    assert!(matches!(decoder.pending.data, Data::Input { .. }));
    assert!(decoder.pending.joined.is_empty());
}

#[test]
fn single_line_data_survives_compaction() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: abc\n");
    assert!(decoder.next_event().is_none());
    decoder.feed(b"\n");
    assert_eq!(decoder.pending.data, Data::Joined);
    assert_eq!(collect(&mut decoder), ["abc"]);
}

#[test]
fn consumed_input_is_dropped_on_feed() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: one\n\ndata: tw");
    assert_eq!(collect(&mut decoder), ["one"]);
    decoder.feed(b"o\n\n");
    assert_eq!(decoder.buf, b"data: two\n\n");
    assert_eq!(collect(&mut decoder), ["two"]);
}

#[test]
fn long_line_is_scanned_once() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: ");
    for _ in 0..100 {
        decoder.feed(b"xxxxxxxxxx");
        assert!(decoder.next_event().is_none());
        assert_eq!(decoder.scanned, decoder.buf.len());
    }
    decoder.feed(b"\n\n");
    assert_eq!(collect(&mut decoder), ["x".repeat(1000)]);
}

#[test]
fn poisoning_releases_memory() {
    let mut decoder = Decoder::with_max_event_size(8);
    decoder.feed(b"data: 0123456789");
    assert!(decoder.next_event().unwrap().is_err());
    assert_eq!(decoder.buf.capacity(), 0);
    assert_eq!(decoder.buffered_len(), 0);
}
