//! Arbitrary bytes as a stored conversation continued over a Chat backend,
//! translated whole and with its stored turns spliced from a
//! `HistoryCache` (cold, then warm): the first byte chooses the options
//! (bit 0: the backend takes reasoning back, bit 1: the strict loss
//! policy, bit 2: the developer role), the second how the items are cut
//! into stored turns; the rest is a Responses request body, whose `input`
//! items become the stored turns and the last of them the request's own.
//!
//! Checked, beyond not panicking: the spliced translation is the whole's,
//! byte for byte, with the same losses, the same withheld reasoning and
//! the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use wirebridge_convert::loss::LossPolicy;
use wirebridge_convert::responses_to_chat::{History, HistoryCache, Options, ParsedRequest};

fn options(bits: u8) -> Options {
    let mut options = Options::default();
    options.profile.replay_reasoning = bits & 1 != 0;
    options.profile.developer_role = bits & 4 != 0;
    if bits & 2 != 0 {
        options.policy = LossPolicy::strict();
    }
    options
}

/// Everything a translation gives that splicing could change.
fn outcome(body: &[u8], history: &History<'_>, options: &Options) -> String {
    let parsed = match ParsedRequest::parse(body) {
        Ok(parsed) => parsed,
        Err(e) => return format!("unparsed: {e}"),
    };
    match parsed.translate(history, options) {
        Ok(t) => format!(
            "{}\nlosses: {:?}\nwithheld: {:?}",
            String::from_utf8_lossy(&t.body),
            t.losses.iter().collect::<Vec<_>>(),
            t.context.echo.input_transformations
        ),
        Err(e) => format!("error: {e} {:?}", e.param()),
    }
}

fuzz_target!(|data: &[u8]| {
    let [bits, cuts, body @ ..] = data else {
        return;
    };
    let Ok(Value::Object(mut request)) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let Some(Value::Array(items)) = request.remove("input") else {
        return;
    };
    // The request's own items: the last one or two.
    let own_len = (1 + usize::from(cuts & 1)).min(items.len());
    let (stored, own) = items.split_at(items.len() - own_len);
    if stored.is_empty() {
        return;
    }
    // Stored arrays of one to four items, cut by the bits of `cuts`.
    let mut arrays: Vec<String> = Vec::new();
    let mut rest = stored;
    let mut shift = 1;
    while !rest.is_empty() {
        let len = (1 + usize::from((cuts >> shift) & 3)).min(rest.len());
        shift = if shift >= 6 { 1 } else { shift + 2 };
        let (array, after) = rest.split_at(len);
        arrays.push(Value::Array(array.to_vec()).to_string());
        rest = after;
    }
    if arrays.len() % 2 == 1 {
        arrays.push("[]".to_owned());
    }
    let ids: Vec<String> = (0..arrays.len() / 2).map(|n| format!("resp_{n}")).collect();
    request.insert("input".into(), Value::Array(own.to_vec()));
    request.insert("previous_response_id".into(), Value::from("resp_last"));
    request.remove("conversation");
    let body = serde_json::to_vec(&request).expect("a JSON object serializes");

    let options = options(*bits);
    let arrays = || arrays.iter().map(String::as_str);
    let whole = outcome(&body, &History::new("resp_last", arrays()), &options);
    let cache = HistoryCache::default();
    for pass in ["cold", "warm"] {
        let history = History::new("resp_last", arrays()).with_cache(
            &cache,
            "tenant",
            ids.iter().map(String::as_str),
        );
        let spliced = outcome(&body, &history, &options);
        assert_eq!(spliced, whole, "{pass}: spliced differs from whole");
    }
});
