//! `GET …/models` and `GET …/models/{id}` for Messages clients: the list
//! of the service behind, in Anthropic's shape.

use std::fmt;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tower::Service;
use wirebridge_convert::messages_to_responses::{model_info, model_list, ModelPage};
use wirebridge_convert::ConvertError;

use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::error_response::{api_error, Dialect};
use crate::refusal::request::ModelNotListed;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{read_limited, unusable_status, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::upstream_list::{json_reply, models_request};

/// Largest upstream error body read.
const MAX_UPSTREAM_ERROR: usize = 1024 * 1024;

/// What a Messages client asks of the list.
pub(crate) enum Asked {
    /// A page of the list.
    List(ModelPage),
    /// One model.
    One(String),
}

/// `GET {prefix}/models` or `GET {prefix}/models/{id}`, for Messages
/// clients: the prefix and what is asked.
pub(crate) fn route<D: Direction>(
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Option<(String, Asked)> {
    if method != Method::GET || D::CLIENT_ENDPOINT != "/messages" {
        return None;
    }
    let path = path.trim_end_matches('/');
    if let Some(prefix) = path.strip_suffix("/models") {
        return Some((prefix.to_owned(), Asked::List(ModelPage::from_query(query))));
    }
    let (rest, id) = path.rsplit_once('/')?;
    let prefix = rest.strip_suffix("/models")?;
    Some((prefix.to_owned(), Asked::One(id.to_owned())))
}

/// Answers a Messages client's model request from the list of the service
/// behind (`GET {prefix}/models`, asked with the client's credentials).
pub(crate) async fn serve<S, D, ReqB, ResB>(
    mut inner: S,
    max_reply_size: usize,
    request: Request<ReqB>,
    prefix: String,
    asked: Asked,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let (mut parts, _) = request.into_parts();
    D::client_head(&mut parts);
    let uri = format!("{prefix}/models")
        .parse()
        .unwrap_or_else(|_| parts.uri.clone());
    let upstream = models_request(parts.headers, uri, parts.version);
    // `inner` was polled ready before it was moved here.
    let response = inner.call(upstream).await?;
    let status = response.status();
    let anthropic = Dialect::Anthropic;
    if let Some(error) = unusable_status(status) {
        return Ok(Refused::from(error).response_in(anthropic));
    }
    if !status.is_success() {
        let bytes = read_limited(response.into_body(), MAX_UPSTREAM_ERROR).await;
        let (status, body) = anthropic.reshape_upstream_error(status, &bytes);
        return Ok(json_reply(status, body));
    }
    let list = match Limited::new(response.into_body(), max_reply_size)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let error = UnusableReply::unread("model list", max_reply_size, &*e);
            return Ok(Refused::from(error).response_in(anthropic));
        }
    };
    let answer = match &asked {
        Asked::List(page) => model_list(&list, page).map(Some),
        Asked::One(id) => model_info(&list, id),
    };
    Ok(match answer {
        Ok(Some(body)) => json_reply(StatusCode::OK, body),
        Ok(None) => {
            let Asked::One(id) = asked else {
                unreachable!("a list is always answered")
            };
            Refused::from(ModelNotListed { id }).response_in(anthropic)
        }
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_GATEWAY);
            let error = api_error(e.to_string(), "server_error", error_code(&e));
            anthropic.error_response(status, error)
        }
    })
}

fn error_code(e: &ConvertError) -> &'static str {
    match e {
        ConvertError::InvalidUpstream(_) => "invalid_upstream_list",
        _ => "upstream_list_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::{MessagesOverResponses, ResponsesOverChat};

    #[test]
    fn only_messages_clients_are_answered_here() {
        let get = Method::GET;
        let list = route::<MessagesOverResponses>(&get, "/v1/models", Some("limit=3"));
        assert!(matches!(list, Some((p, Asked::List(page))) if p == "/v1" && page.limit == 3));
        let one = route::<MessagesOverResponses>(&get, "/v1/models/claude-x", None);
        assert!(matches!(one, Some((p, Asked::One(id))) if p == "/v1" && id == "claude-x"));
        assert!(route::<MessagesOverResponses>(&Method::POST, "/v1/models", None).is_none());
        assert!(route::<MessagesOverResponses>(&get, "/v1/messages", None).is_none());
        assert!(route::<ResponsesOverChat>(&get, "/v1/models", None).is_none());
    }
}
