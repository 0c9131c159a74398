//! The endpoints of background responses: `POST …/responses/{id}/cancel`,
//! and `GET …/responses/{id}?stream=true&starting_after=N`, which follows
//! (or resumes) a run's events.

use http::{Method, Response};

use super::follow::Follower;
use super::respond::event_stream;
use super::run::Stop;
use super::BackgroundRuns;
use crate::body::ResponseBody;
use crate::refusal::background::EventsNotKept;
use crate::refusal::stored::{ResponseNotFound, StoreUnavailable};
use crate::replies::Refused;
use crate::stateful::{status_of, with_output, with_status, Stateful};

/// How long a cancel waits for the run it stopped to write its end.
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A request about a background response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// `POST …/responses/{id}/cancel`.
    Cancel(String),
    /// `GET …/responses/{id}?stream=true`, after the event numbered
    /// `starting_after` when given.
    Follow(String, Option<u64>),
}

/// The background route `method`, `path` and `query` make, if any; a
/// `starting_after` that is no number is a 400 naming it.
pub(crate) fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    endpoint: &str,
) -> Option<Result<Route, Refused>> {
    let path = path.trim_end_matches('/');
    let rest = crate::paths::after_endpoint(path, endpoint)?;
    match (method, rest.split_once('/')) {
        (&Method::POST, Some((id, "cancel"))) if !id.is_empty() => {
            Some(Ok(Route::Cancel(id.to_owned())))
        }
        (&Method::GET, None) if !rest.is_empty() => {
            let mut stream = false;
            let mut after = None;
            for pair in query.unwrap_or("").split('&') {
                match pair.split_once('=').unwrap_or((pair, "")) {
                    ("stream", "true") => stream = true,
                    ("starting_after", n) => after = Some(n),
                    _ => {}
                }
            }
            if !stream {
                return None;
            }
            let after = match after.map(str::parse::<u64>) {
                None => None,
                Some(Ok(n)) => Some(n),
                Some(Err(_)) => {
                    return Some(Err(Refused::invalid_parameter(
                        "starting_after",
                        "starting_after must be an event's sequence number".into(),
                    )))
                }
            };
            Some(Ok(Route::Follow(rest.to_owned(), after)))
        }
        _ => None,
    }
}

impl BackgroundRuns {
    /// Answers a background route for `tenant` (`None`: a request without a
    /// credential, which finds nothing).
    pub(crate) async fn serve<B>(
        &self,
        stateful: &Stateful,
        tenant: Option<&str>,
        route: Route,
    ) -> Response<ResponseBody<B>> {
        let answer = match (tenant, route) {
            (None, Route::Cancel(id) | Route::Follow(id, _)) => {
                Err(Refused::from(ResponseNotFound { id: id.to_string() }))
            }
            (Some(tenant), Route::Cancel(id)) => self.cancel(stateful, tenant, &id).await,
            (Some(tenant), Route::Follow(id, after)) => {
                return match self.follow(stateful, tenant, &id, after).await {
                    Ok(response) => response,
                    Err(refused) => refused.response(),
                }
            }
        };
        match answer {
            Ok(body) => {
                let mut response = Response::new(ResponseBody::full(body));
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                response
            }
            Err(refused) => refused.response(),
        }
    }

    /// Stops the run, here or (through the store) on the replica running
    /// it, and answers the response as it then is. A response that has
    /// ended is answered as it ended.
    async fn cancel(
        &self,
        stateful: &Stateful,
        tenant: &str,
        id: &str,
    ) -> Result<Vec<u8>, Refused> {
        if let Some(run) = self.find(tenant, id) {
            run.stop(Stop::Cancelled);
            let _ = tokio::time::timeout(CANCEL_WAIT, run.ended()).await;
        }
        let store = stateful
            .store()
            .ok_or_else(|| Refused::from(ResponseNotFound { id: id.to_string() }))?;
        let record = match store.get(tenant, id).await {
            Ok(Some(record)) => record,
            Ok(None) => return Err(Refused::from(ResponseNotFound { id: id.to_string() })),
            Err(e) => return Err(Refused::from(StoreUnavailable(e))),
        };
        let response = with_output(&record.response, &record.output)
            .map_err(|_| Refused::from(ResponseNotFound { id: id.to_string() }))?;
        if !is_background(&response) {
            return Err(Refused::invalid_parameter(
                "response_id",
                format!("response {id} was not created with `background: true`: only background responses can be cancelled"),
            ));
        }
        match status_of(&record.response).as_deref() {
            Some("queued" | "in_progress") => {
                // Run elsewhere: the replica running it reads this and stops.
                let cancelled = with_status(&response, "cancelled", None);
                let turn = wirebridge_convert::responses_to_chat::Turn {
                    previous_response_id: record.parent.clone(),
                    conversation: None,
                    input: record.input.clone(),
                    store: true,
                };
                stateful
                    .save_state(tenant, &turn, &cancelled)
                    .await
                    .map_err(|e| Refused::from(StoreUnavailable(e)))?;
                Ok(cancelled)
            }
            _ => Ok(response),
        }
    }

    /// The run's events after `after`, as they come: for a run this
    /// process runs or ran a short while ago.
    async fn follow<B>(
        &self,
        stateful: &Stateful,
        tenant: &str,
        id: &str,
        after: Option<u64>,
    ) -> Result<Response<ResponseBody<B>>, Refused> {
        if let Some(run) = self.find(tenant, id) {
            if !run.streams {
                return Err(Refused::invalid_parameter(
                    "stream",
                    format!(
                        "response {id} was created without `stream: true`, so it makes no \
                         events to follow; retrieve it without `stream`"
                    ),
                ));
            }
            if let Some(after) = after.filter(|&n| run.last_sequence().is_none_or(|last| n > last))
            {
                let sent = match run.last_sequence() {
                    Some(last) => format!("its last event so far is {last}"),
                    None => "it has made no event yet".to_owned(),
                };
                return Err(Refused::invalid_parameter(
                    "starting_after",
                    format!("starting_after {after} names no event of response {id}: {sent}"),
                ));
            }
            if matches!(run.read_after(after), super::run::Read::Lost) {
                return Err(Refused::invalid_parameter(
                    "starting_after",
                    format!(
                        "the events of response {id} after {} are no longer kept; retrieve the \
                         response without `stream`",
                        after.map_or_else(|| "its start".to_owned(), |n| n.to_string())
                    ),
                ));
            }
            return Ok(event_stream(Follower::new(run, after)));
        }
        let store = stateful
            .store()
            .ok_or_else(|| Refused::from(ResponseNotFound { id: id.to_string() }))?;
        match store.get(tenant, id).await {
            Ok(Some(_)) => Err(EventsNotKept { id: id.to_owned() }.into()),
            Ok(None) => Err(Refused::from(ResponseNotFound { id: id.to_string() })),
            Err(e) => Err(Refused::from(StoreUnavailable(e))),
        }
    }
}

fn is_background(response: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(default)]
        background: Option<bool>,
    }
    serde_json::from_slice::<Flag>(response).is_ok_and(|f| f.background == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routed(method: Method, path: &str, query: Option<&str>) -> Option<Route> {
        route(&method, path, query, "/responses").map(|r| r.unwrap_or_else(|_| panic!("refused")))
    }

    #[test]
    fn routes() {
        assert_eq!(
            routed(Method::POST, "/v1/responses/resp_1/cancel", None),
            Some(Route::Cancel("resp_1".into()))
        );
        assert_eq!(
            routed(
                Method::GET,
                "/v1/responses/resp_1",
                Some("stream=true&starting_after=7")
            ),
            Some(Route::Follow("resp_1".into(), Some(7)))
        );
        assert_eq!(
            routed(Method::GET, "/v1/responses/resp_1", Some("stream=true")),
            Some(Route::Follow("resp_1".into(), None))
        );
        // Without `stream`, a retrieval like any other.
        assert_eq!(routed(Method::GET, "/v1/responses/resp_1", None), None);
        assert_eq!(
            routed(
                Method::GET,
                "/v1/responses/resp_1/input_items",
                Some("stream=true")
            ),
            None
        );
        assert_eq!(routed(Method::POST, "/v1/responses", None), None);
        assert!(route(
            &Method::GET,
            "/v1/responses/r",
            Some("stream=true&starting_after=x"),
            "/responses"
        )
        .is_some_and(|r| r.is_err()));
    }
}
