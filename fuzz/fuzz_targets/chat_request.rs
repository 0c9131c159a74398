//! Arbitrary bytes as a Chat Completions request body, translated for a
//! Responses backend with the default options.
//!
//! Checks, beyond not panicking: a translated body is JSON (see
//! [`Json`]: as strictly as the request was); a refusal has a message, a
//! 4xx or 5xx status and an error body that is JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::chat_to_responses::{translate_request, Options};
use wirebridge_fuzz::Json;

fuzz_target!(|data: &[u8]| {
    match translate_request(data, &Options::default()) {
        Ok(translated) => {
            // JSON in, JSON out: strictly, when the request was strictly
            // JSON; by the grammar at least, when it held values (a lone
            // surrogate escape, say) that only the grammar allows, since
            // those are copied as the client wrote them. The request is
            // only read again when the body is not strictly JSON.
            let output = Json::of(&translated.body);
            if output != Json::Strict {
                let input = Json::of(data);
                assert!(
                    input != Json::Strict && output == Json::Grammar,
                    "a {input:?} request translated to a {output:?} body: {}",
                    String::from_utf8_lossy(&translated.body)
                );
            }
        }
        Err(error) => {
            assert!(
                !error.to_string().is_empty(),
                "empty error message: {error:?}"
            );
            assert!(
                (400..600).contains(&error.status()),
                "{error:?}: status {}",
                error.status()
            );
            assert_eq!(
                Json::of(&error.to_body()),
                Json::Strict,
                "error body is not JSON"
            );
        }
    }
});
