//! Property-style test: however a stream is cut into chunks, it decodes to
//! the same events as when it arrives in one piece.

mod common;

use common::{decode_chunks, decode_whole, Outcome, OwnedEvent, Rng};
use wirebridge_sse::Decoder;

const RESPONSES: &str = concat!(
    ": connected\n",
    "\n",
    "retry: 3000\n",
    "event: response.created\n",
    "id: evt_0\n",
    "data: {\"type\":\"response.created\",\"sequence_number\":0,",
    "\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n",
    "\n",
    "event: response.output_text.delta\n",
    "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",",
    "\"output_index\":0,\"content_index\":0,\"delta\":\"h\u{e9}llo \u{2713} \u{1F600}\"}\n",
    "\n",
    ": keepalive\n",
    "event: response.output_text.delta\n",
    "id: evt_2\n",
    "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",",
    "\"output_index\":0,\"content_index\":0,\"delta\":\" \u{65e5}\u{672c}\u{8a9e}\"}\n",
    "\n",
    "event: response.output_text.done\n",
    "data: {\"type\":\"response.output_text.done\",\n",
    "data:  \"text\":\"h\u{e9}llo \u{2713} \u{1F600} \u{65e5}\u{672c}\u{8a9e}\"}\n",
    "\n",
    "event: response.completed\n",
    "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",",
    "\"status\":\"completed\",\"usage\":{\"input_tokens\":12,\"output_tokens\":7}}}\n",
    "\n",
);

const CHAT: &str = concat!(
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",",
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n",
    "\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",",
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Caf\u{e9} \u{2615}\"}}]}\n",
    "\n",
    ": OPENROUTER PROCESSING\n",
    "\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",",
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n",
    "\n",
    "data: [DONE]\n",
    "\n",
);

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

fn cr(text: &str) -> String {
    text.replace('\n', "\r")
}

/// Streams that exercise every boundary case at least once.
fn corpus() -> Vec<Vec<u8>> {
    let mut chat_truncated = crlf(CHAT);
    // Upstreams often close right after the sentinel.
    chat_truncated.truncate(chat_truncated.len() - 4);
    let mut with_bad_utf8 = b"data: before\n\ndata: \xF0\x9F\x98\n\nevent: \xFF\n\n".to_vec();
    with_bad_utf8.extend_from_slice(CHAT.as_bytes());
    vec![
        RESPONSES.as_bytes().to_vec(),
        CHAT.as_bytes().to_vec(),
        crlf(RESPONSES).into_bytes(),
        cr(CHAT).into_bytes(),
        chat_truncated.into_bytes(),
        format!("\u{FEFF}{}", cr(RESPONSES)).into_bytes(),
        format!("\u{FEFF}{}", crlf(CHAT)).into_bytes(),
        with_bad_utf8,
    ]
}

fn decode_split(pieces: &[&[u8]]) -> Vec<Outcome> {
    decode_chunks(&mut Decoder::new(), pieces.iter().copied())
}

#[test]
fn the_corpus_decodes_as_expected() {
    let responses: Vec<_> = decode_whole(RESPONSES.as_bytes())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(responses.len(), 5);
    assert_eq!(responses[0].retry, Some(3000));
    assert_eq!(responses[1].id.as_deref(), Some("evt_0"));
    assert!(responses[1]
        .data
        .ends_with("\"delta\":\"h\u{e9}llo \u{2713} \u{1F600}\"}"));
    assert_eq!(responses[2].id.as_deref(), Some("evt_2"));
    assert_eq!(
        responses[3].data,
        "{\"type\":\"response.output_text.done\",\n \"text\":\"h\u{e9}llo \u{2713} \u{1F600} \u{65e5}\u{672c}\u{8a9e}\"}"
    );
    assert_eq!(responses[4].event.as_deref(), Some("response.completed"));

    let chat: Vec<_> = decode_whole(CHAT.as_bytes())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(chat.len(), 4);
    assert!(chat.iter().all(|e| e.event.is_none()));
    assert_eq!(chat[3], OwnedEvent::data("[DONE]"));

    let corpus = corpus();
    // Line-ending style and a byte order mark change nothing.
    assert_eq!(decode_whole(&corpus[2]), decode_whole(&corpus[0]));
    assert_eq!(decode_whole(&corpus[5]), decode_whole(&corpus[0]));
    assert_eq!(decode_whole(&corpus[3]), decode_whole(&corpus[1]));
    assert_eq!(decode_whole(&corpus[4]), decode_whole(&corpus[1]));
    assert_eq!(decode_whole(&corpus[6]), decode_whole(&corpus[1]));
    let bad = decode_whole(&corpus[7]);
    assert_eq!(bad.len(), 7);
    assert!(bad[1].is_err() && bad[2].is_err());
}

#[test]
fn one_byte_chunks() {
    for stream in corpus() {
        let pieces: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode_split(&pieces), decode_whole(&stream));
    }
}

#[test]
fn every_single_cut() {
    for stream in corpus() {
        let whole = decode_whole(&stream);
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(decode_split(&[a, b]), whole, "cut at {cut}");
        }
    }
}

#[test]
fn random_cuts() {
    for (n, stream) in corpus().iter().enumerate() {
        let whole = decode_whole(stream);
        for seed in 0..500 {
            let mut rng = Rng::new(seed * 31 + n as u64);
            let pieces = rng.split(stream);
            assert_eq!(decode_split(&pieces), whole, "stream {n}, seed {seed}");
        }
    }
}
