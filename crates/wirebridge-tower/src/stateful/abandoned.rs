//! A stored response whose background run was left by a process that is
//! gone: read as `failed` once no process holds the run's lease (see
//! `background`'s leases), and the JSON of a stored response's status.

use serde_json::value::RawValue;
use wirebridge_convert::responses_to_chat::Turn;
use wirebridge_store::{ResponseStore, StoredResponse};
use wirebridge_wire::RawObject;

use super::{with_output, Stateful};

/// Why a run whose lease expired ended, as its response says.
const ABANDONED: &str =
    "the server running the response stopped before it was done, and said nothing more";

/// The `status` of a stored response object.
pub(crate) fn status_of(response: &str) -> Option<String> {
    let raw: &RawValue = serde_json::from_str(response).ok()?;
    RawObject::parse(raw).ok()?.str("status").map(str::to_owned)
}

/// `response` with another status (and, for `failed`, its error).
pub(crate) fn with_status(response: &[u8], status: &str, error: Option<(&str, &str)>) -> Vec<u8> {
    let Some(raw) = std::str::from_utf8(response)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
    else {
        return response.to_vec();
    };
    let Ok(mut object) = RawObject::parse(raw) else {
        return response.to_vec();
    };
    let status = serde_json::to_string(status).expect("a string serializes");
    object.set("status", &status);
    if let Some((code, message)) = error {
        let error = serde_json::json!({ "code": code, "message": message });
        object.set("error", &error.to_string());
    }
    object.to_raw().get().as_bytes().to_vec()
}

/// `record` as it stands: when it says its run is still going but no
/// process holds the run's lease, it is marked `failed` (and kept so), and
/// the failed record is answered instead. A store that cannot be asked
/// leaves the record as it is.
pub(crate) async fn settled(
    stateful: &Stateful,
    store: &dyn ResponseStore,
    tenant: &str,
    record: StoredResponse,
) -> StoredResponse {
    if !matches!(
        status_of(&record.response).as_deref(),
        Some("queued" | "in_progress")
    ) {
        return record;
    }
    match store.lease_held(tenant, &record.id).await {
        Ok(Some(false)) => {}
        // Held, kept by no lease (the run ends with this process), or not
        // known now.
        _ => return record,
    }
    let Ok(response) = with_output(&record.response, "[]") else {
        return record;
    };
    let failed = with_status(&response, "failed", Some(("server_error", ABANDONED)));
    tracing::warn!(response_id = %record.id, "a background response whose lease expired is marked failed");
    let turn = Turn {
        previous_response_id: record.parent.clone(),
        conversation: None,
        input: record.input.clone(),
        store: true,
    };
    if stateful.save_state(tenant, &turn, &failed).await.is_err() {
        return record;
    }
    match store.get(tenant, &record.id).await {
        Ok(Some(kept)) => kept,
        _ => record,
    }
}
