//! `GET /v1/models` through the real binary: Codex's catalog, built from
//! the upstream's list and the settings file, and the plain list for
//! everyone else.

mod support;

use std::path::PathBuf;

use serde_json::{json, Value};
use support::{get, start, start_with_env};

/// A settings file of its own, with `text` in it.
fn settings(text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("wirebridge-catalog-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("coder.md"), "You write careful code.").unwrap();
    let path = dir.join("bridge.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// An upstream answering every request with `status` and `body`, and
/// sending the request heads it receives.
async fn upstream(
    status: &'static str,
    body: &'static str,
) -> (
    std::net::SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tx.send(String::from_utf8_lossy(&head).to_lowercase());
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    (addr, rx)
}

fn slugs(catalog: &Value) -> Vec<&str> {
    catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["slug"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_default_serve_lists_the_demo_model_both_ways() {
    let proxy = start(&["serve"]);
    let (status, body) = get(&format!("{}/v1/models", proxy.url)).await;
    assert_eq!(status, 200);
    let list: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], "wirebridge-demo");
    assert_eq!(list["data"][0]["object"], "model");

    let (status, body) = get(&format!("{}/v1/models?client_version=0.169.0", proxy.url)).await;
    assert_eq!(status, 200);
    let catalog: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(slugs(&catalog), ["wirebridge-demo"]);
    let demo = &catalog["models"][0];
    assert_eq!(demo["input_modalities"], json!(["text", "image"]));
    // The generic profile drops efforts on a Chat backend: none offered.
    assert_eq!(demo["supported_reasoning_levels"], json!([]));
}

#[tokio::test]
async fn codex_gets_the_upstream_models_with_the_settings_and_the_upstreams_credentials() {
    const LIST: &str = r#"{"object":"list","data":[{"id":"qwen3-coder","object":"model","created":1,"owned_by":"vllm","max_model_len":40960}]}"#;
    let (addr, mut heads) = upstream("200 OK", LIST).await;
    let file = settings(
        r#"
profile = "vllm"

[models."qwen3-coder"]
display_name = "Qwen3 Coder"
code_mode = true
instructions_file = "coder.md"

[models."reader"]
input_modalities = ["text"]
reasoning_efforts = ["low"]
"#,
    );
    let proxy = start_with_env(
        &[
            "serve",
            "--upstream",
            &format!("http://{addr}/v1"),
            "--upstream-api-key-env",
            "TEST_UPSTREAM_KEY",
            "--config",
            file.to_str().unwrap(),
        ],
        &[("TEST_UPSTREAM_KEY", "sk-upstream")],
    );
    let (status, body) = get(&format!("{}/v1/models?client_version=0.169.0", proxy.url)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let head = heads.recv().await.unwrap();
    assert!(head.starts_with("get /v1/models http/1.1\r\n"), "{head}");
    assert!(
        head.contains("authorization: bearer sk-upstream\r\n"),
        "{head}"
    );

    let catalog: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(slugs(&catalog), ["qwen3-coder", "reader"]);
    let coder = &catalog["models"][0];
    assert_eq!(coder["display_name"], "Qwen3 Coder");
    assert_eq!(coder["context_window"], 40960);
    assert_eq!(coder["use_responses_lite"], true);
    assert_eq!(coder["tool_mode"], "code_mode_only");
    assert_eq!(coder["base_instructions"], "You write careful code.");
    assert_eq!(coder["default_reasoning_level"], "medium");
    let reader = &catalog["models"][1];
    assert_eq!(reader["input_modalities"], json!(["text"]));
    assert_eq!(reader["supported_reasoning_levels"][0]["effort"], "low");
    assert_eq!(reader["default_reasoning_level"], "low");

    // Anyone else gets the upstream's list, byte for byte.
    let (status, body) = get(&format!("{}/v1/models", proxy.url)).await;
    assert_eq!(status, 200);
    assert_eq!(&body[..], LIST.as_bytes());
    let head = heads.recv().await.unwrap();
    assert!(head.starts_with("get /v1/models http/1.1\r\n"), "{head}");
}

#[tokio::test]
async fn an_upstream_without_models_is_answered_for_from_the_settings() {
    let (addr, _heads) = upstream(
        "404 Not Found",
        r#"{"error":{"message":"no such route","type":"invalid_request_error"}}"#,
    )
    .await;
    let upstream_url = format!("http://{addr}/v1");
    let file = settings("[models.\"local\"]\ncontext_window = 8192\n");
    let proxy = start(&[
        "serve",
        "--upstream",
        &upstream_url,
        "--config",
        file.to_str().unwrap(),
    ]);
    let (status, body) = get(&format!("{}/v1/models", proxy.url)).await;
    assert_eq!(status, 200);
    let list: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(list["data"][0]["id"], "local");
    let (_, body) = get(&format!("{}/v1/models?client_version=0.169.0", proxy.url)).await;
    let catalog: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(slugs(&catalog), ["local"]);
    assert_eq!(catalog["models"][0]["context_window"], 8192);

    // With no model set, the upstream's 404 reaches the client, in
    // OpenAI's shape.
    let bare = start(&["serve", "--upstream", &upstream_url]);
    let (status, body) = get(&format!("{}/v1/models?client_version=0.169.0", bare.url)).await;
    assert_eq!(status, 404);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["message"], "no such route");
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_for_codex_too() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let proxy = start(&["serve", "--upstream", &format!("http://{closed}/v1")]);
    let (status, body) = get(&format!("{}/v1/models?client_version=0.169.0", proxy.url)).await;
    assert_eq!(status, 502);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["code"], "upstream_unreachable");
}
