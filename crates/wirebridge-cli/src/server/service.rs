//! The service each connection runs: the app, with every request counted in
//! flight until its response body is sent or dropped, and its body under the
//! read deadline (a 408 when it is missed).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode, Version};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use tower::ServiceExt;
use wirebridge_wire::error::{ApiError, ErrorBody};

use super::body::{BodyClock, DeadlineBody, InFlightBody};
use super::watchdog::Activity;
use super::{App, Place, ResponseBody};

/// One connection's service.
#[derive(Clone)]
pub struct ConnectionService {
    app: App,
    activity: Arc<Activity>,
    body_read_timeout: Duration,
    slot: ConnectionSlot,
}

/// A connection's place under the connection cap, in every request's
/// extensions: a connection upgraded to a WebSocket ends its HTTP life at
/// once, but its session keeps the upgrade request's head, and with it the
/// slot, for as long as it runs.
#[derive(Clone)]
pub struct ConnectionSlot(#[allow(dead_code)] Arc<Place>);

impl ConnectionService {
    /// `app`, for the connection whose activity is `activity` and whose
    /// place under the cap is `slot`.
    pub fn new(
        app: App,
        activity: Arc<Activity>,
        body_read_timeout: Duration,
        slot: Arc<Place>,
    ) -> Self {
        Self {
            app,
            activity,
            body_read_timeout,
            slot: ConnectionSlot(slot),
        }
    }
}

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<InFlightBody<ResponseBody>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        // The head is complete: from here until the response body is sent
        // or dropped, the connection is not idle.
        let in_flight = self.activity.begin();
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(self.slot.clone());
        // Kept for the log line of a 408 (a URI clone shares its bytes).
        let (method, uri, version) = (parts.method.clone(), parts.uri.clone(), parts.version);
        let (body, clock) = DeadlineBody::new(body, self.body_read_timeout);
        let answer = self.app.clone().oneshot(Request::from_parts(parts, body));
        Box::pin(async move {
            let response = match within(answer, &clock).await {
                Some(response) => response,
                None => {
                    let path = uri.path();
                    tracing::info!(%method, %path, status = 408, "request body timed out");
                    request_timeout(clock.limit, version)
                }
            };
            Ok(response.map(|body| InFlightBody::new(body, in_flight)))
        })
    }
}

/// The app's answer, or `None` when the request body missed its deadline:
/// at the deadline if the app is still waiting for it, or after, if the
/// app's answer came from the body's failure (a 400 or a 502).
async fn within<F>(answer: F, clock: &BodyClock) -> Option<Response<ResponseBody>>
where
    F: Future<Output = Result<Response<ResponseBody>, Infallible>>,
{
    let response = if clock.finished() {
        answer.await
    } else {
        tokio::pin!(answer);
        // The deadline first: when the body's own timer fails the read at
        // the same instant, the app's answer to that failure (a 400 or a
        // 502, and its log line) is not waited for.
        let raced = tokio::select! {
            biased;
            () = tokio::time::sleep_until(clock.deadline) => None,
            response = &mut answer => Some(response),
        };
        match raced {
            Some(response) => response,
            // The whole body arrived in time: what is left to wait for is
            // the upstream, which is never the client's fault.
            None if !clock.expire() => answer.await,
            None => return None,
        }
    };
    let response = response.unwrap_or_else(|e| match e {});
    (!clock.expired()).then_some(response)
}

/// A 408 in the shape both APIs use.
fn request_timeout(limit: Duration, version: Version) -> Response<ResponseBody> {
    let error = ErrorBody {
        error: ApiError {
            message: format!("the request body did not arrive within {}", human(limit)).into(),
            kind: "invalid_request_error".into(),
            param: None,
            code: Some("request_timeout".into()),
        },
    };
    let body = serde_json::to_vec(&error).expect("error bodies always serialize");
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|e| match e {})
            .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, length);
    // The rest of the body was never read, so this HTTP/1 connection cannot
    // carry another request. (HTTP/2 only resets the stream.)
    if version < Version::HTTP_2 {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// `60s`, `1500ms`.
fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_408_is_an_openai_error_that_closes_http1() {
        let response = request_timeout(Duration::from_millis(1500), Version::HTTP_11);
        assert_eq!(response.status(), 408);
        assert_eq!(response.headers()[header::CONNECTION], "close");
        let response = request_timeout(Duration::from_secs(60), Version::HTTP_2);
        assert!(response.headers().get(header::CONNECTION).is_none());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            error,
            serde_json::json!({"error": {
                "message": "the request body did not arrive within 60s",
                "type": "invalid_request_error",
                "param": null,
                "code": "request_timeout",
            }})
        );
    }
}
