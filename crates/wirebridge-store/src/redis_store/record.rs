//! How one record is written as a Redis value: compact JSON with a format
//! version, so the layout can change without misreading old values.

use serde::{Deserialize, Serialize};

use crate::{StoreError, StoredResponse};

/// The current layout.
const VERSION: u32 = 1;

#[derive(Serialize)]
struct Borrowed<'a> {
    v: u32,
    id: &'a str,
    parent: Option<&'a str>,
    created_at: u64,
    input: &'a str,
    output: &'a str,
    response: &'a str,
}

#[derive(Deserialize)]
struct Owned {
    v: u32,
    id: String,
    parent: Option<String>,
    created_at: u64,
    input: String,
    output: String,
    response: String,
}

/// The value stored for `record`.
pub(super) fn encode(record: &StoredResponse) -> Vec<u8> {
    let value = Borrowed {
        v: VERSION,
        id: &record.id,
        parent: record.parent.as_deref(),
        created_at: record.created_at,
        input: &record.input,
        output: &record.output,
        response: &record.response,
    };
    // Strings and integers only: serialization cannot fail.
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The record stored as `value` under the key for `id`.
pub(super) fn decode(id: &str, value: &[u8]) -> Result<StoredResponse, StoreError> {
    let record: Owned = serde_json::from_slice(value)
        .map_err(|e| StoreError::Corrupt(format!("response {id}: {e}")))?;
    if record.v != VERSION {
        return Err(StoreError::Corrupt(format!(
            "response {id}: unknown record version {}",
            record.v
        )));
    }
    if record.id != id {
        return Err(StoreError::Corrupt(format!(
            "response {id}: the record holds id {}",
            record.id
        )));
    }
    Ok(StoredResponse {
        id: record.id,
        parent: record.parent,
        created_at: record.created_at,
        input: record.input,
        output: record.output,
        response: record.response,
    })
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
            response: "{}".into(),
        }
    }

    #[test]
    fn round_trip() {
        let record = sample();
        assert_eq!(decode("resp_1", &encode(&record)), Ok(record));
    }

    #[test]
    fn refuses_garbage_other_versions_and_other_ids() {
        assert!(matches!(
            decode("resp_1", b"not json"),
            Err(StoreError::Corrupt(_))
        ));
        let other_version = String::from_utf8(encode(&sample()))
            .unwrap()
            .replace(r#""v":1"#, r#""v":2"#);
        assert!(matches!(
            decode("resp_1", other_version.as_bytes()),
            Err(StoreError::Corrupt(_))
        ));
        assert!(matches!(
            decode("resp_2", &encode(&sample())),
            Err(StoreError::Corrupt(_))
        ));
    }
}
