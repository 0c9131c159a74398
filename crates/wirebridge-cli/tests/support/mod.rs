//! Starting the real `wirebridge` binary on loopback, and talking to it.

#![allow(dead_code)] // each test file uses its own share of these

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_wirebridge");

/// A running process, killed on drop.
pub struct Proc {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `wirebridge ARGS --listen 127.0.0.1:0` and reads the address from
/// its first stdout line.
pub fn start(args: &[&str]) -> Proc {
    start_with_env(args, &[])
}

/// `start`, with these environment variables set.
pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Proc {
    spawn(args, env, Stdio::null())
}

fn spawn(args: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Proc {
    let mut child = Command::new(BIN)
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("the binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();
    Proc { child, url }
}

/// POSTs `body` as JSON on a connection of its own; the status and the
/// whole body.
pub async fn post(url: &str, body: &Value) -> (u16, Bytes) {
    let request = http::Request::post(url)
        .header("content-type", "application/json")
        .header("authorization", "Bearer test")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    send(request).await
}

/// GETs `url` on a connection of its own; the status and the whole body.
pub async fn get(url: &str) -> (u16, Bytes) {
    send(
        http::Request::get(url)
            .body(Full::new(Bytes::new()))
            .unwrap(),
    )
    .await
}

async fn send(request: http::Request<Full<Bytes>>) -> (u16, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let response = tokio::time::timeout(Duration::from_secs(20), client.request(request))
        .await
        .unwrap()
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        response.into_body().collect().await.unwrap().to_bytes(),
    )
}
