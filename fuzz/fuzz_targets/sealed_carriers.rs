//! Forged sealed carriers: the `encrypted_content` of reasoning and
//! compaction items a client hands back, altered, truncated, or made up.
//!
//! The first byte chooses who opens and how the carrier is made: bit 0 the
//! tenant (the one it was sealed for, or another), bit 1 which carrier
//! (reasoning or compaction), bit 2 the purpose it is opened for (its own,
//! or the other), bit 3 whether the rest of the input is XORed over a
//! genuine carrier's encoded text (an altered carrier: all zeros leaves it
//! genuine) or follows `wbs1.` as the whole text (a made-up one).
//!
//! Checked, beyond not panicking:
//! - a carrier opens only when it is the genuine one, opened by its own
//!   tenant for its own purpose, and then to exactly what was sealed;
//! - through the translators (to a Chat backend, and to a stateless
//!   Responses backend), the sealed text reaches the backend only then, and
//!   every request is either translated to JSON or refused with an error
//!   that names itself.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::responses_to_chat::{
    translate_request, History, Options, ParsedRequest, Seal,
};
use wirebridge_convert::responses_to_responses;
use wirebridge_convert::seal::{Purpose, SealKey, Sealer, PREFIX};
use wirebridge_fuzz::check_request;

const TENANT: &str = "tenant-a";
const OTHER: &str = "tenant-b";
/// What the genuine reasoning carrier holds: a JSON string literal.
const REASONING: &str = "\"the-sealed-reasoning\"";
/// What the genuine compaction carrier holds.
const SUMMARY: &str = "the-sealed-summary";

struct Genuine {
    sealer: Arc<Sealer>,
    reasoning: String,
    compaction: String,
}

/// One key and one carrier of each kind, sealed once: the nonce is
/// random, and a fixed carrier keeps runs reproducible.
fn genuine() -> &'static Genuine {
    static GENUINE: OnceLock<Genuine> = OnceLock::new();
    GENUINE.get_or_init(|| {
        let key: SealKey = "07".repeat(32).parse().expect("a 32-byte hex key");
        let sealer = Arc::new(Sealer::new(key, Vec::new()));
        Genuine {
            reasoning: sealer.seal(Purpose::Reasoning, TENANT, REASONING.as_bytes()),
            compaction: sealer.seal(Purpose::Compaction, TENANT, SUMMARY.as_bytes()),
            sealer,
        }
    })
}

/// A request whose history holds `carrier` in an item of `kind`.
fn request(kind: Purpose, carrier: &str) -> String {
    let carrier = serde_json::to_string(carrier).expect("strings serialize");
    let item = match kind {
        Purpose::Reasoning => format!(
            r#"{{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":{carrier}}}"#
        ),
        Purpose::Compaction => {
            format!(r#"{{"type":"compaction","id":"cmp_1","encrypted_content":{carrier}}}"#)
        }
        // A thinking carrier goes back to a Messages backend: the
        // messages_backend_stream target checks those.
        Purpose::Thinking => unreachable!("no thinking carrier is made here"),
    };
    format!(
        r#"{{"model":"m","input":[{{"role":"user","content":"Hi"}},{item},{{"role":"user","content":"Go on."}}]}}"#
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let genuine = genuine();
    let scope = if mode & 1 == 0 { TENANT } else { OTHER };
    let (kind, original, plaintext) = if mode & 2 == 0 {
        (Purpose::Reasoning, &genuine.reasoning, REASONING)
    } else {
        (Purpose::Compaction, &genuine.compaction, SUMMARY)
    };
    let purpose = match (mode & 4 == 0, kind) {
        (true, kind) => kind,
        (false, Purpose::Reasoning) => Purpose::Compaction,
        (false, Purpose::Compaction | Purpose::Thinking) => Purpose::Reasoning,
    };
    let carrier = if mode & 8 == 0 {
        // The genuine carrier's text, XORed with the input; bytes that
        // would leave ASCII are kept as they were.
        let mut text = original.as_bytes().to_vec();
        for (byte, flip) in text[PREFIX.len()..].iter_mut().zip(rest) {
            let flipped = *byte ^ flip;
            if flipped.is_ascii() {
                *byte = flipped;
            }
        }
        String::from_utf8(text).expect("ASCII stays UTF-8")
    } else {
        format!("{PREFIX}{}", String::from_utf8_lossy(rest))
    };
    let opens = carrier == *original && scope == TENANT && purpose == kind;

    match genuine.sealer.open(purpose, scope, &carrier) {
        Ok(opened) => {
            assert!(opens, "a forged carrier opened: {carrier}");
            assert_eq!(opened, plaintext.as_bytes());
        }
        Err(_) => assert!(!opens, "the genuine carrier did not open"),
    }

    // Through the translators, where a client sends it back.
    let body = request(kind, &carrier);
    let seal = Seal {
        sealer: Arc::clone(&genuine.sealer),
        scope: scope.to_owned(),
    };
    let options = Options {
        seal: Some(seal),
        ..Options::default()
    };
    let secret = plaintext.trim_matches('"');
    let reached = |sent: &[u8]| {
        let sent = String::from_utf8_lossy(sent);
        sent.contains(secret)
    };
    // A carrier opened for the other purpose is never read as one.
    let readable = carrier == *original && scope == TENANT;

    let chat = translate_request(body.as_bytes(), &options);
    check_request(body.as_bytes(), chat.as_ref().map(|t| t.body.as_slice()));
    if let Ok(chat) = &chat {
        assert!(
            readable || !reached(&chat.body),
            "a forged carrier reached the backend: {}",
            String::from_utf8_lossy(&chat.body)
        );
    }

    let parsed = ParsedRequest::parse(body.as_bytes()).expect("the request is well formed");
    let native = responses_to_responses::translate_request(parsed, &History::default(), &options);
    check_request(body.as_bytes(), native.as_ref().map(|t| t.body.as_slice()));
    if let Ok(native) = &native {
        assert!(
            readable || !reached(&native.body),
            "a forged carrier reached the backend: {}",
            String::from_utf8_lossy(&native.body)
        );
    }
});
