//! Asking the backend whether it accepts a credential, before the bridge
//! writes to the shared store under it without a backend call (a
//! conversation created, items added, metadata updated).
//!
//! The Conversations API is answered from the store alone: nothing else
//! checks the credential a create or an addition of items comes with, so
//! made-up keys could fill the store and evict real tenants' records. A
//! tenant not yet [accepted](Stateful::is_accepted) is checked once with
//! the cheapest authenticated call every backend of the two APIs serves,
//! `GET {prefix}/models` with the client's own credentials: a 2xx accepts
//! it; a 401, 403 or 429 is answered to the client as the backend gave
//! it; anything else is a 502 that says the credential could not be
//! checked. Refused credentials are not remembered (nothing unbounded is
//! kept for keys anyone can make up): each write they try asks again,
//! and so costs a backend round trip the backend's own limits apply to.

use std::fmt;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::Body;
use tower::Service;

use super::Stateful;
use crate::body::ResponseBody;
use crate::error_response::reshape_upstream_error;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{read_limited, unusable_status, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::upstream_list::{json_reply, models_request};

/// Largest backend error body read for a refusal.
const MAX_REFUSAL_BODY: usize = 64 * 1024;

/// What checking a credential came to.
pub(crate) enum Checked<B> {
    /// The backend accepts it (or had already): the write may go ahead.
    Accepted,
    /// It was not accepted: the reply to answer instead.
    Refused(Response<ResponseBody<B>>),
}

impl Stateful {
    /// Makes sure the backend accepts `tenant`'s credential (sent in
    /// `headers`) before a write to the store that reaches no backend:
    /// asks it once with `GET {prefix}/models` through `inner` (polled
    /// ready), unless the tenant is already accepted.
    pub(crate) async fn check_credential<S, ReqB, ResB>(
        &self,
        mut inner: S,
        tenant: &str,
        headers: &http::HeaderMap,
        prefix: &str,
    ) -> Result<Checked<ResB>, S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        if self.is_accepted(tenant) {
            return Ok(Checked::Accepted);
        }
        let response = inner.call(probe(headers, prefix)).await?;
        let status = response.status();
        if status.is_success() {
            self.accept(tenant);
            return Ok(Checked::Accepted);
        }
        if let Some(error) = unusable_status(status) {
            return Ok(Checked::Refused(Refused::from(error).response()));
        }
        let passed_on = [
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::TOO_MANY_REQUESTS,
        ];
        if passed_on.contains(&status) {
            let bytes = read_limited(response.into_body(), MAX_REFUSAL_BODY).await;
            let body = reshape_upstream_error(status, &bytes);
            return Ok(Checked::Refused(json_reply(status, body)));
        }
        let error = UnusableReply::CredentialUnchecked {
            status,
            prefix: prefix.to_owned(),
        };
        Ok(Checked::Refused(Refused::from(error).response()))
    }
}

/// `GET {prefix}/models` with the client's headers (its credentials), for
/// an answer in plain JSON.
fn probe<ReqB>(headers: &http::HeaderMap, prefix: &str) -> Request<RequestBody<ReqB>> {
    let uri = format!("{prefix}/models").parse().unwrap_or_default();
    models_request(headers.clone(), uri, http::Version::HTTP_11)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wirebridge_store::MemoryStore;

    use http::{header, HeaderValue};

    use super::*;

    #[test]
    fn the_probe_lists_models_with_the_clients_credentials_only() {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k"));
        headers.insert("openai-organization", HeaderValue::from_static("org"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("42"));
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/x"));
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let request = probe::<()>(&headers, "/openai/v1");
        assert_eq!(request.method(), http::Method::GET);
        assert_eq!(request.uri(), "/openai/v1/models");
        let sent = request.headers();
        assert_eq!(sent[header::AUTHORIZATION], "Bearer k");
        assert_eq!(sent["openai-organization"], "org");
        assert!(!sent.contains_key(header::CONTENT_LENGTH));
        assert!(!sent.contains_key(header::CONTENT_TYPE));
        assert_eq!(sent[header::ACCEPT_ENCODING], "identity");
        assert_eq!(sent[header::ACCEPT], "application/json");
    }

    #[test]
    fn trusted_credentials_count_as_accepted() {
        let mut stateful = Stateful::new(Arc::new(MemoryStore::new()));
        assert!(!stateful.is_accepted("t"));
        stateful.trust_credentials(true);
        assert!(stateful.is_accepted("t"));
        stateful.trust_credentials(false);
        assert!(!stateful.is_accepted("t"));
        stateful.accept("t");
        assert!(stateful.is_accepted("t"));
    }
}
