//! `GET …/models` with a model catalog: Codex's catalog for Codex, the
//! upstream's list as it is for everyone else, errors in OpenAI's shape.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use tower::{service_fn, Layer, ServiceExt};
use wirebridge_convert::catalog::{InputModality, ModelCatalog, ModelSettings};
use wirebridge_tower::{
    ChatToResponsesLayer, RequestBody, ResponsesToChatLayer, MODELS_ETAG_HEADER,
};

const LIST: &str = r#"{"object":"list","data":[
    {"id":"qwen3-coder","object":"model","created":1,"owned_by":"vllm","max_model_len":32768},
    {"id":"qwen3-vl","object":"model","created":1,"owned_by":"vllm"}]}"#;

/// What the upstream was asked: method, path and query, authorization.
type Asked = Arc<Mutex<Vec<(String, String, Option<String>)>>>;

/// An upstream answering every request with `status` and `body`.
fn upstream(
    status: u16,
    body: &'static str,
    asked: Asked,
) -> impl tower::Service<
    Request<RequestBody<Full<Bytes>>>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(move |request: Request<RequestBody<Full<Bytes>>>| {
        let asked = asked.clone();
        async move {
            let auth = request
                .headers()
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned());
            let uri = request.uri().to_string();
            asked
                .lock()
                .unwrap()
                .push((request.method().to_string(), uri, auth));
            let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
            *response.status_mut() = StatusCode::from_u16(status).unwrap();
            response
                .headers_mut()
                .insert("x-upstream", "yes".parse().unwrap());
            Ok::<_, Infallible>(response)
        }
    })
}

fn catalog() -> ModelCatalog {
    ModelCatalog::new()
        .reasoning_efforts(["low", "medium", "high"])
        .model(
            "qwen3-vl",
            ModelSettings {
                display_name: Some("Qwen3 VL".into()),
                code_mode: Some(true),
                ..ModelSettings::default()
            },
        )
        .model(
            "local-alias",
            ModelSettings {
                input_modalities: Some(vec![InputModality::Text]),
                ..ModelSettings::default()
            },
        )
}

async fn get(
    layer: &ResponsesToChatLayer,
    status: u16,
    body: &'static str,
    uri: &str,
) -> (StatusCode, http::HeaderMap, Bytes, Asked) {
    get_if(layer, status, body, uri, None).await
}

/// [`get`], with an `If-None-Match` when `tag` is given.
async fn get_if(
    layer: &ResponsesToChatLayer,
    status: u16,
    body: &'static str,
    uri: &str,
    tag: Option<&str>,
) -> (StatusCode, http::HeaderMap, Bytes, Asked) {
    let asked = Asked::default();
    let service = layer.layer(upstream(status, body, asked.clone()));
    let mut request = Request::get(uri).header("authorization", "Bearer sk-client");
    if let Some(tag) = tag {
        request = request.header("if-none-match", tag);
    }
    let request = request.body(Full::new(Bytes::new())).unwrap();
    let response = service.oneshot(request).await.unwrap();
    let (head, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (head.status, head.headers, body, asked)
}

fn json_of(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap()
}

#[tokio::test]
async fn codex_gets_its_catalog_built_from_the_upstream_list() {
    let layer = ResponsesToChatLayer::new().model_catalog(catalog());
    let (status, headers, body, asked) =
        get(&layer, 200, LIST, "/v1/models?client_version=0.169.0").await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    // The upstream was asked for its plain list, with the client's
    // credentials and without Codex's marker.
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        [(
            "GET".to_owned(),
            "/v1/models".to_owned(),
            Some("Bearer sk-client".to_owned())
        )]
    );
    let catalog = json_of(&body);
    let models = catalog["models"].as_array().unwrap();
    let slugs: Vec<&str> = models.iter().map(|m| m["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["qwen3-coder", "qwen3-vl", "local-alias"]);
    let (coder, vl, alias) = (&models[0], &models[1], &models[2]);
    assert_eq!(coder["context_window"], 32768);
    assert_eq!(coder["input_modalities"], json!(["text", "image"]));
    assert_eq!(coder["use_responses_lite"], false);
    assert_eq!(coder["default_reasoning_level"], "medium");
    assert_eq!(vl["display_name"], "Qwen3 VL");
    assert_eq!(vl["use_responses_lite"], true);
    assert_eq!(alias["input_modalities"], json!(["text"]));
}

#[tokio::test]
async fn codexs_catalog_has_a_tag_and_is_not_sent_again_while_it_holds() {
    let layer = ResponsesToChatLayer::new().model_catalog(catalog());
    let codex = "/v1/models?client_version=0.171.0";
    let (status, headers, body, _) = get(&layer, 200, LIST, codex).await;
    assert_eq!(status, 200);
    let tag = headers["etag"].to_str().unwrap().to_owned();
    assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
    assert_eq!(headers[MODELS_ETAG_HEADER], tag.as_str());
    assert!(!body.is_empty());

    // The same catalog, asked for with its tag: 304, no body, the tag.
    let (status, headers, body, asked) = get_if(&layer, 200, LIST, codex, Some(&tag)).await;
    assert_eq!(status, 304);
    assert!(body.is_empty());
    assert!(headers.get("content-type").is_none());
    assert_eq!(headers["etag"], tag.as_str());
    // The upstream was still asked (the catalog is built from its list).
    assert_eq!(asked.lock().unwrap().len(), 1);

    // Another tag, or none: the catalog whole.
    let (status, _, body, _) = get_if(&layer, 200, LIST, codex, Some("\"other\"")).await;
    assert_eq!(status, 200);
    assert!(!body.is_empty());

    // The upstream's list changed: so did the tag, and the old one no
    // longer holds.
    const FEWER: &str = r#"{"object":"list","data":[
        {"id":"qwen3-coder","object":"model","created":1,"owned_by":"vllm"}]}"#;
    let (status, headers, body, _) = get_if(&layer, 200, FEWER, codex, Some(&tag)).await;
    assert_eq!(status, 200);
    assert_ne!(headers["etag"], tag.as_str());
    assert_eq!(headers[MODELS_ETAG_HEADER], headers["etag"]);
    assert_eq!(json_of(&body)["models"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn other_clients_get_the_upstream_list_as_it_is() {
    let layer = ResponsesToChatLayer::new().model_catalog(catalog());
    for uri in ["/v1/models", "/v1/models?limit=5", "/openai/v1/models/"] {
        let (status, headers, body, asked) = get(&layer, 200, LIST, uri).await;
        assert_eq!(status, 200);
        assert_eq!(&body[..], LIST.as_bytes(), "{uri}");
        assert_eq!(headers["x-upstream"], "yes");
        assert_eq!(asked.lock().unwrap()[0].1, uri);
    }
}

#[tokio::test]
async fn an_upstream_without_a_list_is_answered_for_from_the_settings() {
    let missing = r#"{"error":{"message":"Not Found","type":"invalid_request_error"}}"#;
    let layer = ResponsesToChatLayer::new().model_catalog(catalog());
    let (status, _, body, _) = get(&layer, 404, missing, "/v1/models?client_version=1").await;
    assert_eq!(status, 200);
    let slugs: Vec<Value> = json_of(&body)["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["slug"].clone())
        .collect();
    assert_eq!(slugs, [json!("local-alias"), json!("qwen3-vl")]);

    let (status, _, body, _) = get(&layer, 404, missing, "/v1/models").await;
    assert_eq!(status, 200);
    let list = json_of(&body);
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], "local-alias");
    assert_eq!(list["data"][0]["object"], "model");
    assert!(list["data"][0]["created"].as_u64().unwrap() > 1_600_000_000);

    // With no model set, the upstream's 404 stands.
    let bare = ResponsesToChatLayer::new().model_catalog(ModelCatalog::new());
    let (status, _, body, _) = get(&bare, 404, missing, "/v1/models?client_version=1").await;
    assert_eq!(status, 404);
    assert_eq!(json_of(&body)["error"]["message"], "Not Found");
}

#[tokio::test]
async fn upstream_errors_are_reported_in_openais_shape() {
    let layer = ResponsesToChatLayer::new().model_catalog(catalog());
    for uri in ["/v1/models", "/v1/models?client_version=0.169.0"] {
        let (status, _, body, _) = get(&layer, 503, "overloaded", uri).await;
        assert_eq!(status, 503, "{uri}");
        let error = json_of(&body);
        assert_eq!(
            error["error"]["message"],
            "the upstream answered 503 Service Unavailable: overloaded"
        );
        assert_eq!(error["error"]["type"], "server_error");

        let denied = r#"{"error":{"message":"bad key","type":"authentication_error","code":"invalid_api_key"}}"#;
        let (status, _, body, _) = get(&layer, 401, denied, uri).await;
        assert_eq!(status, 401);
        assert_eq!(json_of(&body)["error"]["code"], "invalid_api_key");

        let (status, _, body, _) = get(&layer, 307, "", uri).await;
        assert_eq!(status, 502);
        assert_eq!(json_of(&body)["error"]["code"], "upstream_redirect");
    }
    // A success that is no model list cannot become Codex's catalog.
    let (status, _, body, _) = get(&layer, 200, "<html>", "/v1/models?client_version=1").await;
    assert_eq!(status, 502);
    assert_eq!(json_of(&body)["error"]["type"], "server_error");
}

#[tokio::test]
async fn without_a_catalog_the_request_passes_through() {
    let layer = ResponsesToChatLayer::new();
    let (status, _, body, asked) = get(&layer, 200, LIST, "/v1/models?client_version=1").await;
    assert_eq!(status, 200);
    assert_eq!(&body[..], LIST.as_bytes());
    assert_eq!(asked.lock().unwrap()[0].1, "/v1/models?client_version=1");
}

#[tokio::test]
async fn chat_clients_layer_serves_the_catalog_too() {
    // Codex speaks Responses; over a Responses upstream its requests pass
    // through, and its catalog is still the bridge's.
    let layer = ChatToResponsesLayer::new().model_catalog(catalog());
    let asked = Asked::default();
    let service = layer.layer(upstream(200, LIST, asked));
    let request = Request::get("/v1/models?client_version=0.169.0")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(json_of(&body)["models"][1]["use_responses_lite"], true);
}
