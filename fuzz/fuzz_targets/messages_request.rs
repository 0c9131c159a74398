//! Arbitrary bytes as an Anthropic Messages request body, translated for a
//! Responses backend, under the default loss policy and the strict one.
//!
//! Checks, beyond not panicking:
//! * [`check_request`], with a refusal that is a client's error: a 4xx,
//!   also in the Anthropic error body a Messages client is sent;
//! * a translated body is one the Responses request reader takes (the
//!   reader the bridge's Responses side parses requests with), and read
//!   with the translation's notes (the values it copied, the function
//!   tools it wrote) it reads as read without them;
//! * the strict policy refuses exactly the requests that lose something:
//!   it translates a request the default policy translates without a loss,
//!   to the same body, and refuses one the default policy translates with
//!   losses by the first of them;
//! * whatever the single-pass request reader reads, serde reads the same
//!   (`read_as_serde`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::messages_to_responses::{
    error_body, translate_request, Options, TranslatedRequest,
};
use wirebridge_convert::responses_to_chat::ParsedRequest;
use wirebridge_convert::{ConvertError, LossPolicy};
use wirebridge_fuzz::{check_request, Json};
use wirebridge_wire::messages::lenient::read_check::read_as_serde;

fn check(data: &[u8], translated: &Result<TranslatedRequest, ConvertError>) {
    check_request(data, translated.as_ref().map(|t| t.body.as_slice()));
    match translated {
        Ok(t) => {
            let plain = match ParsedRequest::parse(&t.body) {
                Ok(plain) => plain,
                Err(error) => panic!(
                    "the Responses reader refuses the translation: {error}\n{}",
                    String::from_utf8_lossy(&t.body)
                ),
            };
            let noted = ParsedRequest::parse_written(&t.body, &t.copies, t.tools.as_ref())
                .expect("read with its notes, the translation is refused");
            assert_eq!(
                format!("{noted:?}"),
                format!("{plain:?}"),
                "the notes change what is read"
            );
        }
        Err(error) => {
            assert!(
                (400..500).contains(&error.status()),
                "{error:?}: status {}",
                error.status()
            );
            let (status, body) = error_body(error);
            assert!(
                (400..500).contains(&status),
                "{error:?}: Messages status {status}"
            );
            assert_eq!(
                Json::of(&body),
                Json::Strict,
                "Messages error body is not JSON"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    read_as_serde(data);
    let default = translate_request(data, &Options::default());
    check(data, &default);
    let strict = Options {
        policy: LossPolicy::strict(),
    };
    let strict = translate_request(data, &strict);
    check(data, &strict);

    match (&default, &strict) {
        (Ok(d), Ok(s)) => {
            assert!(
                d.losses.is_empty() && s.losses.is_empty(),
                "the strict policy let a loss through: {}",
                d.losses.paths()
            );
            assert_eq!(d.body, s.body, "the policies translate differently");
        }
        // The strict policy stops at the first loss the default one drops.
        (Ok(d), Err(error)) => match (error, d.losses.iter().next()) {
            (ConvertError::Rejected(refused), Some(first)) => {
                assert_eq!(refused, first, "the policies lose different things")
            }
            _ => panic!(
                "the strict policy refuses what the default policy translates: {error} (losses: {})",
                d.losses.paths()
            ),
        },
        (Err(error), Ok(_)) => panic!("only the default policy refuses: {error}"),
        (Err(_), Err(_)) => {}
    }
});
