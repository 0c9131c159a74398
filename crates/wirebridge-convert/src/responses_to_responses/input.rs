//! The whole input a backend that keeps no state is sent: the stored
//! turns' items, then the request's own, joined into one array.

use wirebridge_wire::RawObject;

use serde_json::value::RawValue;

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::responses_to_chat::{History, Seal};
use crate::seal::{OpenError, PREFIX};

/// The stored turns' items, then the request's own, as one JSON array,
/// reasoning the bridge sealed opened for the backend.
pub(super) fn whole_input(
    history: &History<'_>,
    own: &str,
    len: usize,
    seal: Option<&Seal>,
    losses: &mut LossRecorder<'_>,
) -> Result<String, ConvertError> {
    let capacity = history.text_len() + own.len().max(len / 2) + 2;
    let arrays = || history.arrays().iter().copied().chain([own]);
    // Most conversations hold nothing the bridge sealed: one look over the
    // joined text says so. Looking into each array of a long history, and
    // trimming each, cost 16% of a turn's instructions at depth 500
    // (callgrind: 1,282 K a turn before, 1,079 K after).
    let joined = join(arrays(), capacity);
    if !joined.contains(PREFIX) {
        return Ok(joined);
    }
    let stored = history.arrays().len();
    let mut opened = Vec::with_capacity(stored + 1);
    for (n, array) in arrays().enumerate() {
        let path = match n < stored {
            true => "previous_response_id",
            false => "input",
        };
        opened.push(open_sealed(array, seal, path, losses)?);
    }
    Ok(join(opened.iter().map(|array| array.as_ref()), capacity))
}

/// JSON arrays joined into one.
fn join<'s>(arrays: impl Iterator<Item = &'s str>, capacity: usize) -> String {
    let mut joined = String::with_capacity(capacity);
    joined.push('[');
    for array in arrays {
        let inner = array_items(array);
        if inner.is_empty() {
            continue;
        }
        if joined.len() > 1 {
            joined.push(',');
        }
        joined.push_str(inner);
    }
    joined.push(']');
    joined
}

/// An array's items, as text: without its brackets and the whitespace
/// around them. Arrays the bridge stored are compact, their brackets the
/// first and last bytes; anything else is trimmed first.
fn array_items(array: &str) -> &str {
    let inner = match array.as_bytes() {
        [b'[', .., b']'] => &array[1..array.len() - 1],
        _ => {
            let trimmed = array.trim();
            trimmed
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .unwrap_or(trimmed)
        }
    };
    let padded = |byte: Option<&u8>| byte.is_some_and(u8::is_ascii_whitespace);
    match padded(inner.as_bytes().first()) || padded(inner.as_bytes().last()) {
        true => inner.trim(),
        false => inner,
    }
}

/// An array of items with every reasoning item the bridge sealed opened:
/// its `encrypted_content` replaced by the reasoning text it holds, which a
/// backend reads. A carrier that cannot be opened (another tenant's, or
/// sealed under a key no longer kept) is left out, and reported;
/// `encrypted_content` the bridge did not write is the backend's, and kept.
fn open_sealed<'s>(
    array: &'s str,
    seal: Option<&Seal>,
    path: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<std::borrow::Cow<'s, str>, ConvertError> {
    use std::borrow::Cow;
    if !array.contains(PREFIX) {
        return Ok(Cow::Borrowed(array));
    }
    let items: Vec<&RawValue> =
        serde_json::from_str(array).map_err(|e| ConvertError::UnreadableHistory(e.to_string()))?;
    let mut out = Vec::with_capacity(items.len());
    for (n, raw) in items.into_iter().enumerate() {
        let mut item = RawObject::parse(raw)
            .map_err(|e| ConvertError::invalid(format!("{path}[{n}]"), e.to_string()))?;
        let sealed = match (item.str("type"), item.str("encrypted_content")) {
            (Some("reasoning"), Some(sealed)) if sealed.starts_with(PREFIX) => sealed.to_owned(),
            _ => {
                out.push(item.to_raw());
                continue;
            }
        };
        let opened = match seal {
            Some(seal) => seal.open_reasoning(&sealed),
            None => Err(OpenError::Unopenable),
        };
        item.remove("encrypted_content");
        match opened {
            Ok(text) => {
                let part = format!(
                    r#"[{{"type":"reasoning_text","text":{}}}]"#,
                    text.raw().get()
                );
                item.set("content", &part);
            }
            Err(why) => losses.record(
                LossKind::ReasoningHistory,
                format!("{path}[{n}].encrypted_content"),
                format!("encrypted reasoning cannot be replayed: {why}"),
            )?,
        }
        out.push(item.to_raw());
    }
    let joined = serde_json::to_string(&out).expect("raw items serialize");
    Ok(Cow::Owned(joined))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_joined_as_their_items() {
        for (array, items) in [
            (r#"[{"a":1},{"b":2}]"#, r#"{"a":1},{"b":2}"#),
            (" [ {\"a\":1} ]\n", r#"{"a":1}"#),
            ("[]", ""),
            ("[ ]", ""),
            ("", ""),
            (r#"{"a":1}"#, r#"{"a":1}"#),
        ] {
            assert_eq!(array_items(array), items, "{array:?}");
        }
        let joined = join(["[1,2]", "[]", " [3] ", "[4]"].into_iter(), 0);
        assert_eq!(joined, "[1,2,3,4]");
        assert_eq!(join(["[]", ""].into_iter(), 0), "[]");
    }
}
