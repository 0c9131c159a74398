//! The real `wirebridge` binary, started as a process on loopback.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};
use support::{post, start, start_with_env, Proc, BIN};
use wirebridge_testkit::{chat_grammar, parse_sse, responses_grammar};

#[tokio::test]
async fn responses_clients_over_the_demo_chat_upstream() {
    let proxy = start(&["serve"]);
    let (status, body) = post(&format!("{}/healthz", proxy.url), &json!({})).await;
    assert_eq!((status, &body[..]), (200, &b"ok\n"[..]));

    let (status, body) = post(
        &format!("{}/v1/responses", proxy.url),
        &json!({"model": "demo", "input": "Hello"}),
    )
    .await;
    assert_eq!(status, 200);
    let response: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(response["status"], "completed");
    assert!(response["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Hello"));

    let (status, body) = post(
        &format!("{}/v1/responses", proxy.url),
        &json!({"model": "demo", "input": "Hello", "stream": true}),
    )
    .await;
    assert_eq!(status, 200);
    let t = responses_grammar::check(&parse_sse(&body)).unwrap();
    assert!(t.text.contains("Hello"));
    assert!(t.usage.is_some());
}

#[tokio::test]
async fn a_two_turn_tool_loop_with_parallel_calls() {
    let proxy = start(&["serve"]);
    let url = format!("{}/v1/responses", proxy.url);
    let tools = json!([
        {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false},
        {"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}, "strict": false}
    ]);
    let ask = "call get_weather with city=Paris and get_time with tz=UTC";
    let first = json!({"model": "demo", "input": ask, "tools": tools, "stream": true});
    let (_, body) = post(&url, &first).await;
    let t = responses_grammar::check(&parse_sse(&body)).unwrap();
    let names: Vec<_> = t.function_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    let args: Value = serde_json::from_str(&t.function_calls[0].arguments).unwrap();
    assert_eq!(args["city"], "Paris");

    // The client runs the tools and sends the results back with the history.
    let mut input = vec![json!({"role": "user", "content": ask})];
    input.extend(t.output.iter().cloned());
    for call in &t.function_calls {
        input.push(json!({"type": "function_call_output", "call_id": call.call_id, "output": format!("{} result", call.name)}));
    }
    let second = json!({"model": "demo", "input": input, "tools": tools});
    let (status, body) = post(&url, &second).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let response: Value = serde_json::from_slice(&body).unwrap();
    let text = response["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("result"), "{text}");
}

#[tokio::test]
async fn chat_clients_over_a_responses_upstream() {
    let demo = start(&["demo", "--api", "responses"]);
    let proxy = start(&[
        "serve",
        "--upstream",
        &format!("{}/v1", demo.url),
        "--upstream-api",
        "responses",
    ]);
    let url = format!("{}/v1/chat/completions", proxy.url);
    let (status, body) = post(
        &url,
        &json!({"model": "demo", "messages": [{"role": "user", "content": "Hi there"}]}),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let completion: Value = serde_json::from_slice(&body).unwrap();
    assert!(completion["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .contains("Hi there"));

    let request = json!({"model": "demo", "messages": [{"role": "user", "content": "Hi there"}], "stream": true, "stream_options": {"include_usage": true}});
    let (_, body) = post(&url, &request).await;
    let t = chat_grammar::check(&parse_sse(&body), true).unwrap();
    assert!(t.text.contains("Hi there"));
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_in_the_clients_format() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let proxy = start(&["serve", "--upstream", &format!("http://{closed}/v1")]);
    let (status, body) = post(
        &format!("{}/v1/responses", proxy.url),
        &json!({"model": "m", "input": "x"}),
    )
    .await;
    assert_eq!(status, 502);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{error}"
    );
    assert_eq!(error["error"]["code"], "upstream_unreachable");
}

/// An upstream that answers every request with `status` and a `Location`.
async fn redirecting_upstream(status: &'static str) -> std::net::SocketAddr {
    scripted_upstream(format!(
        "HTTP/1.1 {status}\r\nlocation: http://elsewhere.example/v1/responses\r\ncontent-length: 0\r\n\r\n"
    ))
    .await
}

/// An upstream that answers every request with the bytes of `reply`.
async fn scripted_upstream(reply: String) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move {
                // Each request is read whole before it is answered, and the
                // connection is closed only once the client has: closing with
                // unread bytes resets it, and a reset can overtake the reply.
                let mut request = Vec::new();
                let mut buf = vec![0; 64 * 1024];
                loop {
                    while whole_request(&request).is_none() {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let taken = whole_request(&request).unwrap_or(request.len());
                    request.drain(..taken);
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// The length of the first request in `bytes` once its head and as much
/// body as its `content-length` says are there (requests here are never
/// chunked).
fn whole_request(bytes: &[u8]) -> Option<usize> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    (bytes.len() >= end + 4 + length).then_some(end + 4 + length)
}

#[tokio::test]
async fn an_upstream_redirect_is_a_502_never_passed_on() {
    let upstream = redirecting_upstream("307 Temporary Redirect").await;
    let proxy = start(&["serve", "--upstream", &format!("http://{upstream}/v1")]);
    for (path, body) in [
        ("/v1/responses", json!({"model": "m", "input": "x"})),
        ("/v1/models", json!({})),
    ] {
        let (status, body) = post(&format!("{}{path}", proxy.url), &body).await;
        assert_eq!(status, 502, "{path}");
        let error: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(error["error"]["code"], "upstream_redirect", "{path}");
        assert!(
            error["error"]["message"].as_str().unwrap().contains("307"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn the_upstream_connection_s_own_headers_are_not_passed_on() {
    let body = r#"{"object":"list","data":[]}"#;
    let upstream = scripted_upstream(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive, x-upstream-secret\r\n\
         keep-alive: timeout=5\r\nproxy-connection: keep-alive\r\nx-upstream-secret: s3cr3t\r\n\
         x-request-id: kept\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let proxy = start(&["serve", "--upstream", &format!("http://{upstream}/v1")]);
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let request = http::Request::get(format!("{}/v1/files", proxy.url))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    for gone in ["keep-alive", "proxy-connection", "x-upstream-secret"] {
        assert!(
            headers.get(gone).is_none(),
            "{gone} was passed on: {headers:?}"
        );
    }
    assert_eq!(headers["x-request-id"], "kept");
    let got = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(got, body.as_bytes());
}

#[tokio::test]
async fn an_upstream_101_is_a_502() {
    let upstream = scripted_upstream(
        "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n"
            .into(),
    )
    .await;
    let proxy = start(&["serve", "--upstream", &format!("http://{upstream}/v1")]);
    let (status, body) = post(
        &format!("{}/v1/chat/completions", proxy.url),
        &json!({"model": "m", "messages": [{"role": "user", "content": "x"}]}),
    )
    .await;
    assert_eq!(status, 502, "{}", String::from_utf8_lossy(&body));
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"].as_str().unwrap().contains("101"),
        "{error}"
    );
}

#[test]
fn keygen_prints_a_fresh_key_serve_accepts() {
    let key = || {
        let out = Command::new(BIN).arg("keygen").output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let (a, b) = (key(), key());
    assert_ne!(a, b);
    assert_eq!(a.len(), 44, "{a}");
    let proxy = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("WIREBRIDGE_SEAL_KEY", &a)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut proxy = Proc {
        url: String::new(),
        child: proxy,
    };
    let mut line = String::new();
    BufReader::new(proxy.child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on"), "{line}");
}

#[test]
fn bad_settings_exit_2_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("wirebridge-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:0\"\nprofil = \"vllm\"\n").unwrap();
    let output = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("profil") && stderr.contains("line 2"),
        "{stderr}"
    );

    let output = Command::new(BIN)
        .args(["serve", "--profile", "nonesuch"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("nonesuch"));

    // A bad value names its flag or variable.
    let output = Command::new(BIN)
        .args(["serve", "--idle-timeout", "soon"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("'idle_timeout' (--idle-timeout)"),
        "{stderr}"
    );
    let output = Command::new(BIN)
        .arg("serve")
        .env("WIREBRIDGE_PROFILE", "nonesuch")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("'profile' (environment WIREBRIDGE_PROFILE)"),
        "{stderr}"
    );

    // A bad seal key is named, never repeated.
    let output = Command::new(BIN)
        .arg("serve")
        .env("WIREBRIDGE_SEAL_KEY", "hunter2-is-not-a-key")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("seal_key"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[tokio::test]
async fn a_flag_wins_over_the_environment() {
    let proxy = start_with_env(
        &[
            "serve",
            "--profile",
            "vllm",
            "--upstream-label",
            "the flagged gateway",
        ],
        &[
            ("WIREBRIDGE_PROFILE", "nonesuch"),
            ("WIREBRIDGE_UPSTREAM", "http://127.0.0.1:1/v1"),
            ("WIREBRIDGE_UPSTREAM_LABEL", "the exported gateway"),
        ],
    );
    // The flags' profile over a variable naming none (which would be
    // refused) and label, and the environment's upstream (nothing listens
    // on port 1).
    let (status, body) = post(
        &format!("{}/v1/responses", proxy.url),
        &json!({"model": "m", "input": "x"}),
    )
    .await;
    assert_eq!(status, 502, "{}", String::from_utf8_lossy(&body));
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the flagged gateway could not be reached"),
        "{error}"
    );
}

#[test]
fn serve_help_shows_defaults_and_variables() {
    let output = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for shown in [
        "--listen <ADDR> Address to listen on [default: 127.0.0.1:8787] [env: WIREBRIDGE_LISTEN]",
        "[default: 75s] [env: WIREBRIDGE_IDLE_TIMEOUT]",
        "--upstream-api <chat|responses|messages>",
        "[default: one per core] [env: WIREBRIDGE_WORKERS]",
        "--config <FILE> Settings file (TOML) [env: WIREBRIDGE_CONFIG]",
    ] {
        assert!(help.contains(shown), "{shown}: {help}");
    }
}

#[tokio::test]
async fn sigterm_during_a_stream_lets_it_finish_and_exits_0() {
    let mut proxy = start(&["serve"]);
    let url = format!("{}/v1/responses", proxy.url);
    // "demo:slow 100" spaces the demo's chunks 100 ms apart.
    let request = json!({"model": "demo", "input": "demo:slow 100 a few words to stream slowly", "stream": true});
    let pending = tokio::spawn(async move { post(&url, &request).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = proxy.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let (status, body) = pending.await.unwrap();
    assert_eq!(status, 200);
    let t = responses_grammar::check(&parse_sse(&body)).unwrap();
    assert!(
        matches!(t.status.as_str(), "completed" | "failed"),
        "{}",
        t.status
    );
    let exit = tokio::task::spawn_blocking(move || proxy.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.code(), Some(0));
}

#[tokio::test]
async fn h2c_and_http1_on_the_same_port() {
    let proxy = start(&["serve"]);
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<Bytes>>();
    let request = http::Request::post(format!("{}/v1/responses", proxy.url))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            json!({"model": "demo", "input": "over h2", "stream": true}).to_string(),
        )))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(20), client.request(request))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.version(), http::Version::HTTP_2);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let t = responses_grammar::check(&parse_sse(&body)).unwrap();
    assert!(t.text.contains("over h2"));
    let (status, _) = post(&format!("{}/healthz", proxy.url), &json!({})).await;
    assert_eq!(status, 200, "HTTP/1.1 on the same port");
}

#[tokio::test]
async fn http2_connections_close_after_the_idle_timeout_not_the_header_timeout() {
    let proxy = start(&[
        "serve",
        "--header-read-timeout",
        "300ms",
        "--idle-timeout",
        "1500ms",
    ]);
    let stream = tokio::net::TcpStream::connect(proxy.url.strip_prefix("http://").unwrap())
        .await
        .unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let mut streamed = json!({"model": "demo", "input": "demo:slow 150 one two three four five six seven eight nine ten eleven twelve", "stream": true});
    for round in 0..2 {
        // A stream longer than the idle timeout, then a pause longer than
        // the header timeout: the connection serves both rounds.
        let started = std::time::Instant::now();
        let request = http::Request::post(format!("{}/v1/responses", proxy.url))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(streamed.to_string())))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let t = responses_grammar::check(&parse_sse(&body)).unwrap();
        assert_eq!(t.status, "completed", "round {round}");
        assert!(
            started.elapsed() > Duration::from_millis(1500),
            "round {round}"
        );
        tokio::time::sleep(Duration::from_millis(800)).await;
        streamed["input"] =
            json!("demo:slow 150 again one two three four five six seven eight nine ten");
    }
    let idle = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(5), connection)
        .await
        .expect("an idle connection is closed")
        .unwrap()
        .unwrap();
    let waited = idle.elapsed() + Duration::from_millis(800);
    assert!(waited >= Duration::from_millis(1400), "{waited:?}");
}

/// An upstream that answers each request with `{}`, sending the request
/// heads it receives.
async fn recording_upstream() -> (
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
                let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    (addr, rx)
}

#[tokio::test]
async fn url_credentials_are_sent_as_basic_auth_unless_a_key_is_set() {
    let (upstream, mut heads) = recording_upstream().await;
    let url = format!("http://user:hunter2@{upstream}/v1");
    let proxy = start(&["serve", "--upstream", &url]);
    let (status, _) = post(&format!("{}/v1/models", proxy.url), &json!({})).await;
    assert_eq!(status, 200);
    let head = heads.recv().await.unwrap();
    assert!(head.starts_with("post /v1/models http/1.1\r\n"), "{head}");
    // base64("user:hunter2"), in place of the client's own authorization.
    assert!(
        head.contains("authorization: basic dxnlcjpodw50zxiy\r\n"),
        "{head}"
    );
    assert!(
        !head.contains("hunter2") && !head.contains("user@"),
        "{head}"
    );

    let proxy = start_with_env(
        &[
            "serve",
            "--upstream",
            &url,
            "--upstream-api-key-env",
            "TEST_UPSTREAM_KEY",
        ],
        &[("TEST_UPSTREAM_KEY", "sk-configured")],
    );
    post(&format!("{}/v1/models", proxy.url), &json!({})).await;
    let head = heads.recv().await.unwrap();
    assert!(
        head.contains("authorization: bearer sk-configured\r\n"),
        "{head}"
    );
}

#[tokio::test]
async fn error_bodies_name_the_upstream_by_its_label() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://user:hunter2@{closed}/v1");
    let proxy = start(&[
        "serve",
        "--upstream",
        &url,
        "--upstream-label",
        "the model gateway",
    ]);
    for path in ["/v1/responses", "/v1/chat/completions", "/v1/models"] {
        let (status, body) = post(
            &format!("{}{path}", proxy.url),
            &json!({"model": "m", "input": "x", "messages": []}),
        )
        .await;
        assert_eq!(status, 502, "{path}");
        let text = String::from_utf8_lossy(&body);
        let error: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            error["error"]["message"],
            "the model gateway could not be reached (connection refused)",
            "{path}"
        );
        assert!(!text.contains(&closed.port().to_string()), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}
