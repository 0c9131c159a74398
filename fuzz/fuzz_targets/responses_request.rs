//! Arbitrary bytes as a Responses request body, translated for a Chat
//! backend with the default options.
//!
//! Checks, beyond not panicking: a translated body is JSON; a refusal has a
//! message, a 4xx or 5xx status and an error body that is JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::responses_to_chat::{translate_request, Options};

fuzz_target!(|data: &[u8]| {
    match translate_request(data, &Options::default()) {
        Ok(translated) => {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&translated.body) {
                panic!(
                    "translated body is not JSON ({e}): {}",
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
            let body = error.to_body();
            assert!(
                serde_json::from_slice::<serde_json::Value>(&body).is_ok(),
                "error body is not JSON"
            );
        }
    }
});
