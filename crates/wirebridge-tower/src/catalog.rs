//! `GET …/models`, when the layer has a model catalog: Codex is answered
//! with its own catalog, built from the upstream's list; other clients get
//! the upstream's list as it is.
//!
//! Codex is told apart by the `client_version` query parameter, which its
//! models client adds to every request for the catalog
//! (`GET {base_url}/models?client_version=0.169.0`). Its `originator` and
//! `user-agent` headers name which Codex asks (`codex_exec`,
//! `codex_cli_rs`, …), so they cannot tell Codex by one name. OpenAI's SDKs
//! send no query there.
//!
//! Codex's catalog carries an entity tag ([`crate::catalog_etag`]): a
//! request whose `If-None-Match` names the current one is answered
//! `304 Not Modified`, with no body.

use std::fmt;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{header, HeaderMap, Method, Request, Response, StatusCode, Uri};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tower::Service;
use wirebridge_convert::catalog::{codex_catalog, parse_model_list, UpstreamModel};

use crate::body::ResponseBody;
use crate::catalog_etag as etag;
use crate::error_response::reshape_upstream_error;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{read_limited, unusable_status, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::settings::CatalogSettings;
use crate::upstream_list::{json_reply, models_request};

/// The query parameter Codex's models client always sends.
const CODEX_MARKER: &str = "client_version";

/// Largest upstream error body read.
const MAX_UPSTREAM_ERROR: usize = 1024 * 1024;

impl CatalogSettings {
    /// Codex's catalog, of the upstream's models when it listed them; or
    /// `304` when the client's `If-None-Match` names its tag.
    fn codex<B>(
        &self,
        upstream: Option<&[UpstreamModel]>,
        asked: &HeaderMap,
        holder: &str,
    ) -> Response<ResponseBody<B>> {
        let models = self.models.models(upstream);
        let bare = models.iter().filter(|m| m.instructions.is_empty()).count();
        if bare > 0 && !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                models = bare,
                "Codex read a model catalog whose models carry no instructions: Codex puts a \
                 model's catalog instructions first in every request in place of its own, so \
                 these models get none"
            );
        }
        let body = codex_catalog(&models);
        let tag = etag::of(&body);
        self.last_served
            .set(holder.to_owned(), etag::Served::new(tag.clone(), &models));
        let mut response = match etag::matches(asked, &tag) {
            true => {
                let mut response = Response::new(ResponseBody::full(Vec::new()));
                *response.status_mut() = StatusCode::NOT_MODIFIED;
                response
            }
            false => json_reply(StatusCode::OK, body),
        };
        etag::insert(response.headers_mut(), &tag);
        response
    }
}

/// The path before `/models`, for a `GET` of a path that ends with it.
pub(crate) fn route<'p>(method: &Method, path: &'p str) -> Option<&'p str> {
    (method == Method::GET)
        .then(|| path.trim_end_matches('/').strip_suffix("/models"))
        .flatten()
}

/// Whether the request is Codex's.
fn from_codex(uri: &Uri) -> bool {
    uri.query().unwrap_or_default().split('&').any(is_marker)
}

/// Whether a pair of a query (`name=value`, or `name`) is Codex's marker.
fn is_marker(pair: &str) -> bool {
    pair.split('=').next() == Some(CODEX_MARKER)
}

/// Answers `GET {prefix}/models`, for `holder` (the
/// [`catalog_etag::holder`](crate::catalog_etag::holder) of the client's
/// request).
pub(crate) async fn serve<S, ReqB, ResB>(
    mut inner: S,
    catalog: CatalogSettings,
    max_reply_size: usize,
    request: Request<ReqB>,
    prefix: String,
    holder: String,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let codex = from_codex(request.uri());
    let asked = match codex {
        true => request.headers().clone(),
        false => HeaderMap::new(),
    };
    let upstream = match codex {
        true => catalog_request(request, &prefix),
        // Another client's request goes as it came.
        false => request.map(RequestBody::original),
    };
    // `inner` was polled ready before it was moved here.
    let response = inner.call(upstream).await?;
    let status = response.status();
    let settings = &catalog.models;
    if status == StatusCode::NOT_FOUND && settings.has_models() {
        // An upstream without a list of its own: the settings' models.
        return Ok(match codex {
            true => catalog.codex(None, &asked, &holder),
            false => json_reply(StatusCode::OK, settings.openai_list(unix_now())),
        });
    }
    if let Some(error) = unusable_status(status) {
        return Ok(Refused::from(error).response());
    }
    if !status.is_success() {
        return Ok(upstream_error(response).await);
    }
    if !codex {
        return Ok(response.map(ResponseBody::passthrough));
    }
    let body = match Limited::new(response.into_body(), max_reply_size)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let error = UnusableReply::unread("model list", max_reply_size, &*e);
            return Ok(Refused::from(error).response());
        }
    };
    Ok(match parse_model_list(&body) {
        Ok(upstream) => catalog.codex(Some(&upstream), &asked, &holder),
        Err(e) => Refused::from_convert(e).response(),
    })
}

/// Codex's request, as the upstream is asked for its plain list: the same
/// headers (its credentials) but its conditions, without Codex's marker,
/// and a body the bridge can read.
fn catalog_request<ReqB>(request: Request<ReqB>, prefix: &str) -> Request<RequestBody<ReqB>> {
    let (parts, _) = request.into_parts();
    let query: Vec<&str> = parts
        .uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty() && !is_marker(pair))
        .collect();
    let path_and_query = match query.is_empty() {
        true => format!("{prefix}/models"),
        false => format!("{prefix}/models?{}", query.join("&")),
    };
    let mut uri = parts.uri.clone().into_parts();
    uri.path_and_query = path_and_query.parse().ok();
    let uri = Uri::from_parts(uri).unwrap_or_else(|_| parts.uri.clone());

    // The client's conditions are on Codex's catalog, which the bridge
    // writes: the upstream's list is always read whole.
    let mut headers = parts.headers;
    headers.remove(header::IF_NONE_MATCH);
    headers.remove(header::IF_MODIFIED_SINCE);
    models_request(headers, uri, parts.version)
}

/// An upstream error in OpenAI's shape, its status kept. A body in an
/// encoding the bridge cannot read goes as it came.
async fn upstream_error<B>(response: Response<B>) -> Response<ResponseBody<B>>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let encoded = response
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|e| !e.eq_ignore_ascii_case("identity"));
    if encoded {
        return response.map(ResponseBody::passthrough);
    }
    let status = response.status();
    let bytes = read_limited(response.into_body(), MAX_UPSTREAM_ERROR).await;
    json_reply(status, reshape_upstream_error(status, &bytes))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_is_a_get_of_models_under_any_prefix() {
        assert_eq!(route(&Method::GET, "/v1/models"), Some("/v1"));
        assert_eq!(
            route(&Method::GET, "/openai/v1/models/"),
            Some("/openai/v1")
        );
        assert_eq!(route(&Method::GET, "/models"), Some(""));
        assert_eq!(route(&Method::POST, "/v1/models"), None);
        assert_eq!(route(&Method::GET, "/v1/models/gpt-5"), None);
        assert_eq!(route(&Method::GET, "/v1/responses"), None);
    }

    #[test]
    fn codex_is_told_by_its_client_version_parameter() {
        let codex = |uri: &str| from_codex(&uri.parse().unwrap());
        assert!(codex("/v1/models?client_version=0.169.0"));
        assert!(codex("/v1/models?after=x&client_version=0.169.0"));
        assert!(codex("/v1/models?client_version"));
        assert!(!codex("/v1/models"));
        assert!(!codex("/v1/models?limit=20"));
        assert!(!codex("/v1/models?client_versions=1"));
    }

    #[test]
    fn the_upstream_is_asked_for_its_list_without_codexs_marker() {
        let request = Request::get("http://bridge/v1/models?client_version=0.169.0&x=1")
            .header(header::AUTHORIZATION, "Bearer sk-1")
            .header(header::ACCEPT_ENCODING, "gzip")
            .header("originator", "codex_cli_rs")
            .header(header::IF_NONE_MATCH, "\"0123456789abcdef\"")
            .body(())
            .unwrap();
        let upstream = catalog_request(request, "/v1");
        assert_eq!(upstream.method(), Method::GET);
        assert_eq!(upstream.uri(), "http://bridge/v1/models?x=1");
        let headers = upstream.headers();
        assert_eq!(headers[header::AUTHORIZATION], "Bearer sk-1");
        assert_eq!(headers[header::ACCEPT_ENCODING], "identity");
        assert_eq!(headers["originator"], "codex_cli_rs");
        assert!(headers.get(header::IF_NONE_MATCH).is_none());
        let only = Request::get("/models?client_version=1").body(()).unwrap();
        assert_eq!(catalog_request(only, "").uri(), "/models");
    }
}
