//! Behaviour of the decoder on hand-written streams.

mod common;

use common::{decode_chunks, decode_ok, decode_whole, OwnedEvent};
use wirebridge_sse::{DecodeError, Decoder, DEFAULT_MAX_EVENT_SIZE};

fn datas(input: &str) -> Vec<String> {
    decode_ok(input).into_iter().map(|e| e.data).collect()
}

fn datas_chunked(chunks: &[&[u8]]) -> Vec<String> {
    decode_chunks(&mut Decoder::new(), chunks.iter().copied())
        .into_iter()
        .map(|r| r.unwrap().data)
        .collect()
}

#[test]
fn every_line_ending_style() {
    let expected = ["a", "b\nc"];
    assert_eq!(datas("data: a\n\ndata: b\ndata: c\n\n"), expected);
    assert_eq!(datas("data: a\r\n\r\ndata: b\r\ndata: c\r\n\r\n"), expected);
    assert_eq!(datas("data: a\r\rdata: b\rdata: c\r\r"), expected);
    assert_eq!(datas("data: a\r\n\rdata: b\ndata: c\r\r\n"), expected);
}

#[test]
fn crlf_split_across_chunks_is_one_line_end() {
    // A spurious empty line after "a" would dispatch it on its own.
    let chunks: &[&[u8]] = &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"];
    assert_eq!(datas_chunked(chunks), ["a\nb"]);
}

#[test]
fn cr_at_chunk_end_completes_the_line_at_once() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\r\r");
    assert_eq!(decoder.next_event().unwrap().unwrap().data, "a");
    assert!(decoder.next_event().is_none());
    // This LF finishes the CRLF begun above, so it is not a blank line.
    decoder.feed(b"\ndata: b\n");
    assert!(decoder.next_event().is_none());
    decoder.feed(b"\n");
    assert_eq!(decoder.next_event().unwrap().unwrap().data, "b");
}

#[test]
fn lf_after_a_cr_line_end_is_skipped_only_once() {
    let chunks: &[&[u8]] = &[b"event: x\r", b"\n", b"\n"];
    let events = decode_chunks(&mut Decoder::new(), chunks.iter().copied());
    assert_eq!(events, [Ok(OwnedEvent::named("x", ""))]);
}

#[test]
fn byte_order_mark_is_skipped_however_it_is_split() {
    let stream = b"\xEF\xBB\xBFdata: x\n\n";
    for a in 0..=4 {
        for b in a..=4 {
            let chunks = [&stream[..a], &stream[a..b], &stream[b..]];
            assert_eq!(datas_chunked(&chunks), ["x"], "split at {a}, {b}");
        }
    }
}

#[test]
fn byte_order_mark_only_counts_at_the_start() {
    // A second mark is part of the field name, which is then unknown.
    assert!(decode_ok("\u{FEFF}\u{FEFF}data: x\n\n").is_empty());
    assert!(decode_ok("data: x\n\n\u{FEFF}data: y\n\n").len() == 1);
    // A truncated mark is plain content: here an unknown field name.
    assert!(decode_whole(b"\xEF\xBB").is_empty());
    assert!(decode_whole(b"\xEF\xBBdata: x\n\n").is_empty());
}

#[test]
fn field_parsing() {
    assert_eq!(datas("data:x\n\n"), ["x"]);
    assert_eq!(datas("data: x\n\n"), ["x"]);
    assert_eq!(datas("data:  x\n\n"), [" x"]);
    assert_eq!(datas("data: x \n\n"), ["x "]);
    assert_eq!(datas("data: a:b: c\n\n"), ["a:b: c"]);
    // No colon: the whole line is the name and the value is empty.
    assert_eq!(datas("data\n\n"), [""]);
    assert_eq!(datas("data:\n\n"), [""]);
    assert_eq!(datas("data: \n\n"), [""]);
    // Names are exact and case-sensitive; unknown ones are ignored.
    assert!(decode_ok("Data: x\n\ndata : x\n\nfoo: x\n\n").is_empty());
    assert_eq!(datas("foo: 1\ndata: x\nbar\n\n"), ["x"]);
}

#[test]
fn data_lines_join_with_lf() {
    assert_eq!(datas("data: a\ndata: b\ndata: c\n\n"), ["a\nb\nc"]);
    assert_eq!(datas("data\ndata\n\n"), ["\n"]);
    assert_eq!(datas("data: a\ndata:\n\n"), ["a\n"]);
    assert_eq!(datas("data:\ndata: a\n\n"), ["\na"]);
}

#[test]
fn comments_are_skipped_and_counted() {
    let mut decoder = Decoder::new();
    decoder.feed(b": keepalive\n:\n\ndata: a\n: inside an event\ndata: b\n\n:x");
    assert_eq!(decoder.next_event().unwrap().unwrap().data, "a\nb");
    assert!(decoder.next_event().is_none());
    assert_eq!(decoder.comments_seen(), 3);
    assert!(decoder.finish().is_none());
    assert_eq!(decoder.comments_seen(), 4);
}

#[test]
fn event_names() {
    let events = decode_ok("event: a\ndata: 1\n\ndata: 2\n\nevent: b\nevent: c\ndata: 3\n\n");
    assert_eq!(
        events,
        [
            OwnedEvent::named("a", "1"),
            OwnedEvent::data("2"),
            OwnedEvent::named("c", "3"),
        ]
    );
    // An empty name is the default type, the same as no name.
    assert_eq!(
        decode_ok("event: a\nevent:\ndata: 1\n\n"),
        [OwnedEvent::data("1")]
    );
}

#[test]
fn a_name_alone_dispatches_with_empty_data() {
    assert_eq!(
        decode_ok("event: ping\n\n"),
        [OwnedEvent::named("ping", "")]
    );
    assert!(decode_ok("event:\n\n").is_empty());
}

#[test]
fn id_persists_as_last_event_id() {
    let mut decoder = Decoder::new();
    assert_eq!(decoder.last_event_id(), None);
    decoder.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid\ndata: d\n\n");
    let ids: Vec<_> = std::iter::from_fn(|| {
        decoder
            .next_event()
            .map(|e| e.unwrap().id.map(str::to_owned))
    })
    .collect();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(ids, [some("1"), some("1"), some("2"), None]);
    assert_eq!(decoder.last_event_id(), None);

    decoder.feed(b"id: 3\n\n");
    assert!(decoder.next_event().is_none());
    assert_eq!(decoder.last_event_id(), Some("3"));
}

#[test]
fn id_with_nul_is_ignored() {
    let events = decode_ok("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n");
    assert_eq!(events[1].id.as_deref(), Some("1"));
}

#[test]
fn retry_needs_ascii_digits() {
    let mut decoder = Decoder::new();
    decoder.feed(b"retry: 1000\ndata: a\n\ndata: b\n\nretry: 2000\n\n");
    decoder.feed(b"retry: 3s\ndata: c\n\nretry: -1\nretry:\nretry: 1 \ndata: d\n\n");
    let retries: Vec<_> =
        std::iter::from_fn(|| decoder.next_event().map(|e| e.unwrap().retry)).collect();
    // The retry belongs to the event it was sent in.
    assert_eq!(retries, [Some(1000), None, None, None]);
    // The decoder keeps the newest valid one, even without an event.
    assert_eq!(decoder.retry(), Some(2000));
}

#[test]
fn finish_dispatches_an_unterminated_event() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: {\"a\":1}\n\ndata: [DONE]");
    assert_eq!(decoder.next_event().unwrap().unwrap().data, "{\"a\":1}");
    assert!(decoder.next_event().is_none());
    assert!(decoder.finish().unwrap().unwrap().is_done());
    assert!(decoder.finish().is_none());
    assert!(decoder.finish().is_none());
    assert!(decoder.next_event().is_none());
}

#[test]
fn finish_variants() {
    assert_eq!(datas("data: x\n"), ["x"]);
    assert_eq!(datas("data: x\r"), ["x"]);
    assert_eq!(datas("data: x\ndata: y"), ["x\ny"]);
    assert_eq!(datas("data: x\n\n"), ["x"]);
    // Without data there is nothing worth flushing.
    assert!(decode_ok("event: x\n").is_empty());
    assert!(decode_ok("id: 1").is_empty());
    assert!(decode_ok("").is_empty());
}

#[test]
fn finish_drains_events_left_undrained() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\n\ndata: b\n\ndata: c");
    let all: Vec<_> =
        std::iter::from_fn(|| decoder.finish().map(|e| e.unwrap().data.to_owned())).collect();
    assert_eq!(all, ["a", "b", "c"]);
}

#[test]
fn feed_after_finish_is_ignored() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a");
    assert_eq!(decoder.finish().unwrap().unwrap().data, "a");
    decoder.feed(b"\n\ndata: b\n\n");
    assert!(decoder.next_event().is_none());
    assert_eq!(decoder.buffered_len(), 0);
}

#[test]
fn done_sentinel() {
    let events = decode_ok(
        "data: [DONE]\n\ndata: [DONE] \n\ndata: \"[DONE]\"\n\nevent: x\ndata: [DONE]\n\n",
    );
    let done: Vec<_> = events.iter().map(|e| e.data == "[DONE]").collect();
    assert_eq!(done, [true, false, false, true]);
    let mut decoder = Decoder::new();
    decoder.feed(b"data:[DONE]\n\n");
    assert!(decoder.next_event().unwrap().unwrap().is_done());
}

#[test]
fn empty_events_are_not_dispatched() {
    for input in [
        "\n\n\n",
        "\r\n\r\n",
        "\r\r",
        "id: 1\n\n",
        ": comment\n\n",
        "retry: 10\n\n",
        "foo: bar\n\n",
        "event:\n\n",
    ] {
        assert!(decode_ok(input).is_empty(), "{input:?}");
    }
}

#[test]
fn fields_reset_after_dispatch() {
    let events = decode_ok("event: a\nretry: 5\ndata: 1\n\n\n\ndata: 2\n\n");
    assert_eq!(events[1].event, None);
    assert_eq!(events[1].retry, None);
    assert_eq!(events.len(), 2);
}

#[test]
fn utf8_split_across_chunks() {
    let text = "data: h\u{e9}llo \u{2713} \u{1F600}\n\n";
    let bytes = text.as_bytes();
    for cut in 0..bytes.len() {
        assert_eq!(
            datas_chunked(&[&bytes[..cut], &bytes[cut..]]),
            ["h\u{e9}llo \u{2713} \u{1F600}"]
        );
    }
}

#[test]
fn invalid_utf8_skips_only_that_event() {
    let events = decode_whole(b"data: a\xFFb\n\nevent: \xC3\ndata: x\n\ndata: ok\n\n");
    assert_eq!(events.len(), 3);
    match &events[0] {
        Err(DecodeError::InvalidUtf8 { field, source }) => {
            assert_eq!(*field, "data");
            assert_eq!(source.valid_up_to(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        events[1],
        Err(DecodeError::InvalidUtf8 { field: "event", .. })
    ));
    assert!(!events[1].as_ref().unwrap_err().is_fatal());
    assert_eq!(events[2], Ok(OwnedEvent::data("ok")));
}

#[test]
fn invalid_utf8_in_ignored_lines_is_harmless() {
    assert_eq!(datas("data: ok\n\n"), ["ok"]);
    let events = decode_whole(b": \xFF\xFE\nfoo: \xFF\ndata: ok\n\n");
    assert_eq!(events, [Ok(OwnedEvent::data("ok"))]);
    let events = decode_whole(b"id: a\xFFb\ndata: ok\n\n");
    assert_eq!(
        events[0].as_ref().unwrap().id.as_deref(),
        Some("a\u{FFFD}b")
    );
}

#[test]
fn default_limit() {
    assert_eq!(DEFAULT_MAX_EVENT_SIZE, 16 * 1024 * 1024);
    assert_eq!(Decoder::new().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(Decoder::default().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(Decoder::with_max_event_size(7).max_event_size(), 7);
}

#[test]
fn too_large_message() {
    let err = DecodeError::EventTooLarge {
        limit: DEFAULT_MAX_EVENT_SIZE,
    };
    assert_eq!(
        err.to_string(),
        "server-sent event exceeds the 16777216-byte limit"
    );
    assert!(err.is_fatal());
}

fn too_large(limit: usize) -> Option<Result<OwnedEvent, DecodeError>> {
    Some(Err(DecodeError::EventTooLarge { limit }))
}

fn next(decoder: &mut Decoder) -> Option<Result<OwnedEvent, DecodeError>> {
    decoder.next_event().map(|r| r.map(OwnedEvent::from))
}

#[test]
fn event_at_the_limit_is_accepted() {
    let mut decoder = Decoder::with_max_event_size(16);
    // Sixteen bytes of data, split over lines: 7 + 1 + 8.
    decoder.feed(b"data: 1234567\ndata: 12345678\n\n");
    assert_eq!(next(&mut decoder).unwrap().unwrap().data.len(), 16);
    decoder.feed(b"event: 12345678\ndata: 12345678\n\n");
    assert!(next(&mut decoder).unwrap().is_ok());
}

#[test]
fn long_data_line_in_one_chunk_is_too_large() {
    let mut decoder = Decoder::with_max_event_size(16);
    decoder.feed(b"data: 12345678901234567\n\n");
    assert_eq!(next(&mut decoder), too_large(16));
}

#[test]
fn many_data_lines_are_too_large() {
    let mut decoder = Decoder::with_max_event_size(16);
    decoder.feed(b"data: 12345\ndata: 12345\ndata: 12345\n");
    assert_eq!(next(&mut decoder), too_large(16));
}

#[test]
fn name_and_data_count_together() {
    let mut decoder = Decoder::with_max_event_size(16);
    decoder.feed(b"event: 123456789\ndata: 12345678\n\n");
    assert_eq!(next(&mut decoder), too_large(16));
}

#[test]
fn unterminated_line_is_too_large_before_it_ends() {
    let mut decoder = Decoder::with_max_event_size(64);
    decoder.feed(b"data: ");
    let mut fed = 6;
    loop {
        decoder.feed(b"0123456789");
        fed += 10;
        match next(&mut decoder) {
            None => assert!(decoder.buffered_len() <= 64),
            Some(result) => {
                assert_eq!(Some(result), too_large(64));
                break;
            }
        }
    }
    assert_eq!(fed, 66);
}

#[test]
fn partial_line_and_accumulated_data_count_together() {
    let mut decoder = Decoder::with_max_event_size(20);
    decoder.feed(b"data: 0123456789\n");
    assert_eq!(next(&mut decoder), None);
    // Ten bytes of data plus the raw bytes of the unfinished line.
    decoder.feed(b"data: 01");
    assert_eq!(next(&mut decoder), None);
    assert_eq!(decoder.buffered_len(), 18);
    decoder.feed(b"23");
    assert_eq!(next(&mut decoder), None);
    decoder.feed(b"4");
    assert_eq!(next(&mut decoder), too_large(20));
}

#[test]
fn many_small_events_in_one_big_chunk_are_fine() {
    let mut decoder = Decoder::with_max_event_size(16);
    let chunk = "data: 0123456789\n\n".repeat(100);
    decoder.feed(chunk.as_bytes());
    let mut n = 0;
    while let Some(event) = decoder.next_event() {
        assert_eq!(event.unwrap().data, "0123456789");
        n += 1;
    }
    assert_eq!(n, 100);
}

#[test]
fn big_comments_do_not_count() {
    let mut decoder = Decoder::with_max_event_size(16);
    let chunk = format!(": {}\ndata: x\n\n", "c".repeat(100));
    decoder.feed(chunk.as_bytes());
    assert_eq!(next(&mut decoder).unwrap().unwrap().data, "x");
}

#[test]
fn poisoned_decoder_keeps_failing() {
    let mut decoder = Decoder::with_max_event_size(8);
    decoder.feed(b"data: ok\n\ndata: 0123456789\n\ndata: ok\n\n");
    assert_eq!(next(&mut decoder).unwrap().unwrap().data, "ok");
    assert_eq!(next(&mut decoder), too_large(8));
    assert_eq!(decoder.buffered_len(), 0);
    for _ in 0..3 {
        decoder.feed(b"data: ok\n\n");
        assert_eq!(decoder.buffered_len(), 0);
        assert_eq!(next(&mut decoder), too_large(8));
        assert_eq!(
            decoder.finish().map(|r| r.map(OwnedEvent::from)),
            too_large(8)
        );
    }
}
