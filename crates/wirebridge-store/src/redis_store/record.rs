//! How a record is written as Redis values: compact JSON with a format
//! version, the stored items embedded as they are (not re-escaped), so the
//! layout can change without misreading old values and `redis-cli` shows
//! them readably.
//!
//! A record is two values, fields of its conversation's hash: the envelope
//! (the response object and its metadata) and the turn (input and output
//! items, all a continuation reads). Where it is in its conversation is the
//! scripts' (see `scripts.rs`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::{StoreError, StoredResponse, StoredTurn};

/// The current layout. Version 1 kept a whole record in one value, version
/// 2 three values per response, one of them the ids of its ancestors.
const VERSION: u32 = 3;

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    v: u32,
    id: &'a str,
    parent: Option<&'a str>,
    created_at: u64,
    response: &'a RawValue,
}

#[derive(Deserialize)]
struct EnvelopeIn<'a> {
    v: u32,
    id: String,
    parent: Option<String>,
    created_at: u64,
    #[serde(borrow)]
    response: &'a RawValue,
}

#[derive(Serialize)]
struct TurnOut<'a> {
    v: u32,
    input: &'a RawValue,
    output: &'a RawValue,
}

#[derive(Deserialize)]
struct TurnIn<'a> {
    v: u32,
    #[serde(borrow)]
    input: &'a RawValue,
    #[serde(borrow)]
    output: &'a RawValue,
}

/// The two values of a record.
pub(super) struct Encoded {
    pub(super) envelope: Vec<u8>,
    pub(super) turn: Vec<u8>,
}

/// `text` as JSON, checked; `what` names it in the error.
fn json<'a>(
    record: &StoredResponse,
    what: &str,
    text: &'a str,
) -> Result<&'a RawValue, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::NotKept(format!(
            "response {}: its {what} is not JSON: {e}",
            record.id
        ))
    })
}

/// The values stored for `record`; a record whose items or response are not
/// JSON is not kept.
pub(super) fn encode(record: &StoredResponse) -> Result<Encoded, StoreError> {
    let envelope = EnvelopeOut {
        v: VERSION,
        id: &record.id,
        parent: record.parent.as_deref(),
        created_at: record.created_at,
        response: json(record, "response", &record.response)?,
    };
    let turn = TurnOut {
        v: VERSION,
        input: json(record, "input", &record.input)?,
        output: json(record, "output", &record.output)?,
    };
    // Strings, integers and JSON already checked: these cannot fail.
    Ok(Encoded {
        envelope: serde_json::to_vec(&envelope).unwrap_or_default(),
        turn: serde_json::to_vec(&turn).unwrap_or_default(),
    })
}

/// The record of `id` from its two values.
pub(super) fn decode(id: &str, envelope: &[u8], turn: &[u8]) -> Result<StoredResponse, StoreError> {
    let corrupt = |e: serde_json::Error| StoreError::Corrupt(format!("response {id}: {e}"));
    let envelope: EnvelopeIn<'_> = serde_json::from_slice(envelope).map_err(corrupt)?;
    check_version(id, envelope.v)?;
    if envelope.id != id {
        return Err(StoreError::Corrupt(format!(
            "response {id}: the record holds id {}",
            envelope.id
        )));
    }
    let turn = read_turn(id, turn)?;
    Ok(StoredResponse {
        id: envelope.id,
        parent: envelope.parent,
        created_at: envelope.created_at,
        input: turn.input.get().to_owned(),
        output: turn.output.get().to_owned(),
        response: envelope.response.get().to_owned(),
    })
}

/// The turn of response `id` from its value.
pub(super) fn decode_turn(id: &str, value: &[u8]) -> Result<StoredTurn, StoreError> {
    let turn = read_turn(id, value)?;
    Ok(StoredTurn {
        id: id.into(),
        input: turn.input.get().into(),
        output: turn.output.get().into(),
    })
}

/// The turn's value, read and its version checked.
fn read_turn<'v>(id: &str, value: &'v [u8]) -> Result<TurnIn<'v>, StoreError> {
    let turn: TurnIn<'v> = serde_json::from_slice(value)
        .map_err(|e| StoreError::Corrupt(format!("the turn of response {id}: {e}")))?;
    check_version(id, turn.v)?;
    Ok(turn)
}

fn check_version(id: &str, version: u32) -> Result<(), StoreError> {
    if version == VERSION {
        Ok(())
    } else {
        Err(StoreError::Corrupt(format!(
            "response {id}: unknown record version {version}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredResponse {
        StoredResponse {
            id: "resp_1".into(),
            parent: Some("resp_0".into()),
            created_at: 1_700_000_000,
            input: r#"[{"role":"user","content":"héllo \"quoted\" \n"}]"#.into(),
            output: "[]".into(),
            response: r#"{"id":"resp_1","output":[]}"#.into(),
        }
    }

    fn round_trip(record: &StoredResponse) -> Result<StoredResponse, StoreError> {
        let encoded = encode(record)?;
        decode(&record.id, &encoded.envelope, &encoded.turn)
    }

    #[test]
    fn round_trips_with_items_embedded_verbatim() {
        let record = sample();
        assert_eq!(round_trip(&record), Ok(record.clone()));
        let encoded = encode(&record).unwrap();
        assert_eq!(
            String::from_utf8(encoded.turn).unwrap(),
            format!(r#"{{"v":3,"input":{},"output":[]}}"#, record.input)
        );
    }

    #[test]
    fn items_that_are_not_json_are_not_kept() {
        let mut record = sample();
        record.output = "[".into();
        let refused = encode(&record).err();
        assert!(
            matches!(&refused, Some(StoreError::NotKept(m)) if m.contains("output")),
            "{refused:?}"
        );
    }

    #[test]
    fn refuses_garbage_other_versions_and_other_ids() {
        let encoded = encode(&sample()).unwrap();
        let corrupt = |result: Result<StoredResponse, StoreError>| {
            assert!(matches!(result, Err(StoreError::Corrupt(_))), "{result:?}");
        };
        corrupt(decode("resp_1", b"not json", &encoded.turn));
        corrupt(decode("resp_1", &encoded.envelope, b"{}"));
        let old = String::from_utf8(encoded.envelope.clone())
            .unwrap()
            .replace(r#""v":3"#, r#""v":2"#);
        corrupt(decode("resp_1", old.as_bytes(), &encoded.turn));
        corrupt(decode("resp_2", &encoded.envelope, &encoded.turn));
    }
}
