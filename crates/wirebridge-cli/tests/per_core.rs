//! The binary with `--runtime per-core`: a current-thread runtime and a
//! listener per worker thread, sharing one port.

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{get, post, start, start_logged, terminate, BIN};
use wirebridge_testkit::{parse_sse, responses_grammar};

/// A stream the demo upstream spaces out over a second or more.
fn slow_stream() -> Value {
    json!({"model": "demo", "input": "demo:slow 100 a few words to stream slowly", "stream": true})
}

/// Waits for `done`, checking every 20 ms for at most 5 s.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn concurrent_connections_are_all_served_and_spread_over_the_workers() {
    let (proxy, log) = start_logged(
        &["serve", "--runtime", "per-core", "--workers", "4"],
        "warn,wirebridge::server=debug",
    );
    let url = format!("{}/v1/responses", proxy.url);
    // Each request on a connection of its own, all at once.
    let requests: Vec<_> = (0..64)
        .map(|i| {
            let url = url.clone();
            tokio::spawn(async move {
                post(
                    &url,
                    &json!({"model": "demo", "input": format!("hello {i}")}),
                )
                .await
            })
        })
        .collect();
    for request in requests {
        let (status, body) = request.await.unwrap();
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let response: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(response["status"], "completed");
    }
    // Each accept is logged with the worker that made it; the log is
    // written from a thread of its own, a moment later.
    let workers = || -> BTreeSet<String> {
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|line| line.contains("accepted a connection"))
            .filter_map(|line| line.split("worker=").nth(1))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .collect()
    };
    let accepted = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .matches("accepted a connection")
            .count()
    };
    eventually("64 accepts logged", || accepted() >= 64).await;
    // The kernel picks a listener by the connection's addresses: 64
    // connections all landing on one of 4 workers would be a chance of
    // 4^-63, or listeners that do not share the port.
    let seen = workers();
    assert!(seen.len() > 1, "every connection on one worker: {seen:?}");
    assert!(
        seen.iter()
            .all(|w| ["0", "1", "2", "3"].contains(&w.as_str())),
        "{seen:?}"
    );
}

#[tokio::test]
async fn sigterm_drains_an_open_stream_turns_not_ready_and_exits_0() {
    // The metrics listener stays up while the main one drains.
    let metrics_addr = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let metrics_listen = metrics_addr.to_string();
    let mut proxy = start(&[
        "serve",
        "--runtime",
        "per-core",
        "--workers",
        "2",
        "--metrics-listen",
        &metrics_listen,
    ]);
    let readyz = format!("http://{metrics_addr}/readyz");
    eventually("the metrics listener answers", || {
        std::net::TcpStream::connect(metrics_addr).is_ok()
    })
    .await;
    let (status, _) = get(&readyz).await;
    assert_eq!(status, 200);

    let url = format!("{}/v1/responses", proxy.url);
    let pending = tokio::spawn(async move { post(&url, &slow_stream()).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    terminate(&proxy);

    // Not ready as soon as the signal is taken, while the stream still
    // runs...
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = get(&readyz).await;
        let body = String::from_utf8_lossy(&body).into_owned();
        if status == 503 {
            assert!(body.contains("\"draining\":true"), "{body}");
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            Instant::now() < deadline,
            "still ready after SIGTERM: {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...and no worker accepts any more: every listener on the port closed.
    let main_addr = proxy.url.trim_start_matches("http://").to_owned();
    eventually("every listener closed", || {
        std::net::TcpStream::connect(&main_addr).is_err()
    })
    .await;
    assert!(
        !pending.is_finished(),
        "the stream ended before the drain was seen"
    );

    let (status, body) = pending.await.unwrap();
    assert_eq!(status, 200);
    let t = responses_grammar::check(&parse_sse(&body)).unwrap();
    assert_eq!(t.status, "completed");
    let exit = tokio::task::spawn_blocking(move || proxy.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.code(), Some(0));
}

#[tokio::test]
async fn the_connection_cap_is_shared_by_the_workers() {
    let proxy = start(&[
        "serve",
        "--runtime",
        "per-core",
        "--workers",
        "2",
        "--max-connections",
        "1",
    ]);
    let url = format!("{}/v1/responses", proxy.url);
    let holding = tokio::spawn(async move { post(&url, &slow_stream()).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Whichever worker the next connection lands on, the one place is
    // taken: it waits.
    let healthz = format!("{}/healthz", proxy.url);
    let waiting = tokio::spawn(async move { get(&healthz).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!holding.is_finished(), "the stream ended too soon to tell");
    assert!(!waiting.is_finished(), "served past the cap");
    let (status, _) = holding.await.unwrap();
    assert_eq!(status, 200);
    // Its connection closed, the place goes to the one waiting.
    let (status, body) = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("served once the place was free")
        .unwrap();
    assert_eq!((status, &body[..]), (200, &b"ok\n"[..]));
}

#[test]
fn bad_runtime_settings_exit_2_naming_the_setting() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let output = Command::new(BIN)
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--runtime", "per-thread"], &[]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--runtime") && stderr.contains("per-core"),
        "{stderr}"
    );
    let (code, stderr) = run(&[], &[("WIREBRIDGE_RUNTIME", "threads")]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("WIREBRIDGE_RUNTIME") && stderr.contains("multi-thread or per-core"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--runtime", "per-core", "--workers", "0"], &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("'workers'"), "{stderr}");
}
