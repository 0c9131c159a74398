//! Stateful Responses over a [`ResponseStore`]: the conversation a request
//! continues, the responses kept once done, and the retrieval endpoints.
//!
//! Nothing here parses a request or a response: the translator hands over
//! the turn to keep ([`Turn`]) and the finished response ([`Finished`]),
//! and takes the stored history as borrowed JSON ([`History`]).

mod routes;
mod unkept;

use std::fmt;
use std::sync::Arc;

use http::StatusCode;
use serde_json::value::RawValue;
use wirebridge_convert::ids::ResponseIds;
use wirebridge_convert::responses_to_chat::{Finished, History, Turn};
use wirebridge_convert::ConvertError;
use wirebridge_store::{Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};
use wirebridge_wire::error::ApiError;
use wirebridge_wire::responses::strict::ResponseStatus;
use wirebridge_wire::RawObject;

use crate::replies::Refused;

pub(crate) use routes::route;
pub(crate) use unkept::{unstored_frames, unstored_response};

/// What to do with a conversation whose stored chain misses an earlier
/// response (expired, evicted or deleted) when a request continues it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MissingHistory {
    /// Refuse the request: a 404 `previous_response_not_found` naming the
    /// missing response. Nothing is answered on a conversation the model
    /// would see cut short without knowing.
    #[default]
    Refuse,
    /// Answer from the turns still kept, and report the gap as a loss
    /// (`x-wirebridge-dropped: previous_response_id`, and the observer).
    Continue,
}

/// The store of a layer.
#[derive(Clone)]
pub struct Stateful {
    store: Arc<dyn ResponseStore>,
}

impl fmt::Debug for Stateful {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stateful")
    }
}

/// What the store holds for one request: the conversation it continues
/// and the turns holding the items it refers to by id.
#[derive(Default)]
pub(crate) struct Resolved {
    /// The response continued, and its conversation.
    continued: Option<(String, Chain)>,
    /// The stored turns the request's `item_reference` items may name, when
    /// it has any.
    referable: Option<Vec<StoredTurn>>,
}

impl Resolved {
    /// The conversation as the translator reads it: each turn's input
    /// items, then its output items, borrowed as stored; and the items
    /// references may name.
    pub(crate) fn history(&self) -> Result<History<'_>, Refused> {
        let mut history = match &self.continued {
            Some((id, chain)) => History::new(id, chain.turns.iter().flat_map(turn_arrays)),
            None => History::default(),
        };
        if let Some(referable) = &self.referable {
            let turns = self.chain_turns().chain(referable);
            let mut items = Vec::new();
            for array in turns.flat_map(turn_arrays) {
                let parsed: Vec<&RawValue> = serde_json::from_str(array).map_err(|e| {
                    Refused::from_convert(ConvertError::UnreadableHistory(e.to_string()))
                })?;
                items.extend(parsed);
            }
            history = history.with_referable_items(items);
        }
        Ok(history)
    }

    /// The earlier response the conversation misses, when continued
    /// without it.
    pub(crate) fn missing(&self) -> Option<&str> {
        self.continued.as_ref()?.1.missing.as_deref()
    }

    /// The responses a response continuing this conversation continues,
    /// oldest first.
    pub(crate) fn ancestors(&self) -> Vec<String> {
        self.continued
            .as_ref()
            .map(|(_, chain)| chain.ids.clone())
            .unwrap_or_default()
    }

    fn chain_turns(&self) -> impl Iterator<Item = &StoredTurn> {
        self.continued.iter().flat_map(|(_, chain)| &chain.turns)
    }
}

/// A turn's input items, then its output items.
fn turn_arrays(turn: &StoredTurn) -> [&str; 2] {
    [turn.input.as_str(), turn.output.as_str()]
}

impl Stateful {
    pub(crate) fn new(store: Arc<dyn ResponseStore>) -> Self {
        Self { store }
    }

    /// What the store holds for a request continuing `previous` (if any)
    /// and referring to the items `references`: one store round trip for
    /// each that is asked for.
    pub(crate) async fn resolve(
        &self,
        tenant: &str,
        previous: Option<&str>,
        references: &[&str],
        policy: MissingHistory,
    ) -> Result<Resolved, Refused> {
        let mut resolved = Resolved::default();
        if let Some(id) = previous {
            let chain = self.conversation(tenant, id, policy).await?;
            resolved.continued = Some((id.to_owned(), chain));
        }
        if !references.is_empty() {
            let in_chain = |id: &String| resolved.chain_turns().any(|turn| &turn.id == id);
            let mut responses: Vec<String> = Vec::new();
            for response in references
                .iter()
                .filter_map(|r| ResponseIds::response_of(r))
            {
                if !responses.contains(&response) && !in_chain(&response) {
                    responses.push(response);
                }
            }
            let turns = match responses.is_empty() {
                true => Vec::new(),
                false => self
                    .store
                    .turns(tenant, &responses)
                    .await
                    .map_err(|e| unavailable(&e))?,
            };
            resolved.referable = Some(turns.into_iter().flatten().collect());
        }
        Ok(resolved)
    }

    /// The conversation ending with response `id`: a 404 in the client's
    /// API if the tenant has no such response or no longer has one of its
    /// ancestors (continuing without it would silently drop turns), a 503 if
    /// the store cannot be reached.
    async fn conversation(
        &self,
        tenant: &str,
        id: &str,
        policy: MissingHistory,
    ) -> Result<Chain, Refused> {
        match self.store.chain(tenant, id).await {
            Ok(Some(Chain {
                missing: Some(missing),
                ..
            })) if policy == MissingHistory::Refuse => Err(previous_not_found(format!(
                "Previous response with id '{id}' cannot be continued: its conversation is \
                 missing the earlier response '{missing}' (expired, evicted or deleted)."
            ))),
            Ok(Some(chain)) => Ok(chain),
            Ok(None) => Err(previous_not_found(format!(
                "Previous response with id '{id}' not found."
            ))),
            Err(e) => Err(unavailable(&e)),
        }
    }

    /// What to store of a finished response continuing `ancestors`: nothing
    /// for a failed one. The response object is kept without its output
    /// items, which are kept once, beside it.
    pub(crate) fn record(
        &self,
        turn: Turn,
        ancestors: Vec<String>,
        finished: Finished<'_>,
    ) -> Option<StoredResponse> {
        if finished.status == ResponseStatus::Failed {
            return None;
        }
        Some(StoredResponse {
            id: finished.id.to_owned(),
            parent: turn.previous_response_id,
            ancestors,
            created_at: finished.created_at,
            input: turn.input,
            output: finished.output_array(),
            response: envelope(finished.response),
        })
    }

    /// Stores a finished response; whether it was kept (a failed response
    /// is not kept, and needs not be).
    pub(crate) async fn save(
        &self,
        tenant: &str,
        turn: Turn,
        ancestors: Vec<String>,
        finished: Finished<'_>,
    ) -> bool {
        match self.record(turn, ancestors, finished) {
            Some(record) => self.save_record(tenant, record).await,
            None => true,
        }
    }

    /// Stores a record; whether it was kept. The answer is good even when
    /// it cannot be kept: it is delivered, and the failure logged; chaining
    /// on it is then refused with a 404.
    pub(crate) async fn save_record(&self, tenant: &str, record: StoredResponse) -> bool {
        let id = record.id.clone();
        match self.store.save(tenant, record).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(response_id = %id, error = %e, "could not store the response");
                false
            }
        }
    }
}

/// The response object as stored: its `output` written `[]`, the items
/// being kept beside it.
fn envelope(response: &str) -> String {
    let parsed = serde_json::from_str::<&RawValue>(response)
        .ok()
        .and_then(|raw| RawObject::parse(raw).ok());
    match parsed {
        Some(mut object) => {
            object.set("output", "[]");
            object.to_raw().get().to_owned()
        }
        // The translator wrote it: always an object.
        None => response.to_owned(),
    }
}

/// The stored response object with its output items put back.
pub(crate) fn with_output(envelope: &str, output: &str) -> Result<Vec<u8>, serde_json::Error> {
    let raw: &RawValue = serde_json::from_str(envelope)?;
    let mut object = RawObject::parse(raw)?;
    object.set_borrowed("output", serde_json::from_str(output)?);
    Ok(object.to_raw().get().as_bytes().to_vec())
}

/// A request without credentials continues nothing and refers to no stored
/// item (`param` says which it tried): a 400 that says why.
pub(crate) fn needs_credentials(param: &'static str) -> Refused {
    let what = match param {
        "previous_response_id" => "previous_response_id",
        _ => "item_reference",
    };
    Refused::new(
        StatusCode::BAD_REQUEST,
        ApiError {
            message: format!(
                "{what} needs a credential: requests without one keep no responses on this \
                 bridge (it shares no anonymous store), so there is nothing to refer to; send \
                 an authorization header, or the whole conversation in `input`"
            )
            .into(),
            kind: "invalid_request_error".into(),
            param: Some(param.into()),
            code: Some("store_requires_credentials".into()),
        },
    )
}

/// `previous_response_id` names nothing this tenant can continue: a 404.
fn previous_not_found(message: String) -> Refused {
    Refused::new(
        StatusCode::NOT_FOUND,
        ApiError {
            message: message.into(),
            kind: "invalid_request_error".into(),
            param: Some("previous_response_id".into()),
            code: Some("previous_response_not_found".into()),
        },
    )
}

/// The store cannot be reached: a 503 to retry.
pub(crate) fn unavailable(e: &StoreError) -> Refused {
    Refused::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ApiError {
            message: e.to_string().into(),
            kind: "server_error".into(),
            param: None,
            code: Some("store_unavailable".into()),
        },
    )
    .retry_soon()
}
