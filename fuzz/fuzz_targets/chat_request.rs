//! Arbitrary bytes as a Chat Completions request body, translated for a
//! Responses backend with the default options.
//!
//! Checked, beyond not panicking: see [`check_request`].
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::chat_to_responses::{translate_request, Options};
use wirebridge_fuzz::check_request;

fuzz_target!(|data: &[u8]| {
    let translated = translate_request(data, &Options::default());
    check_request(data, translated.as_ref().map(|t| t.body.as_slice()));
});
