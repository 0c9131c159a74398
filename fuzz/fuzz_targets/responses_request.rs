//! Arbitrary bytes as a Responses request body, translated for a Chat
//! backend with the default options.
//!
//! Checked, beyond not panicking: see [`check_request`]; and that whatever
//! the single-pass request reader reads, serde reads the same
//! (`read_as_serde`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::responses_to_chat::{translate_request, Options};
use wirebridge_fuzz::check_request;
use wirebridge_wire::responses::lenient::read_check::read_as_serde;

fuzz_target!(|data: &[u8]| {
    read_as_serde(data);
    let translated = translate_request(data, &Options::default());
    check_request(data, translated.as_ref().map(|t| t.body.as_slice()));
});
