//! The pool against raw TCP servers on loopback, which count the
//! connections they accept and the requests they read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wirebridge_tower::RequestBody;

use crate::upstream::pool::Pool;

/// How the test server treats a connection after each answer.
#[derive(Clone, Copy, PartialEq)]
enum After {
    /// Keeps it for the next request.
    KeepAlive,
    /// Closes it, without saying so in the answer.
    Close,
    /// Closes it a moment after answering, without saying so.
    CloseLater,
    /// Answers the first request; reads the second and closes unanswered.
    DropSecond,
}

struct Server {
    url: String,
    accepted: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

async fn server(after: After) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let accepted = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let (a, r) = (accepted.clone(), requests.clone());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            a.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(stream, after, r.clone()));
        }
    });
    Server {
        url,
        accepted,
        requests,
    }
}

async fn serve(mut stream: TcpStream, after: After, requests: Arc<AtomicUsize>) {
    let mut served = 0;
    loop {
        // Every test request is one small head and a body of `hello`.
        let mut buf = vec![0; 4096];
        let mut read = 0;
        while !buf[..read].ends_with(b"hello") {
            match stream.read(&mut buf[read..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read += n,
            }
        }
        requests.fetch_add(1, Ordering::SeqCst);
        served += 1;
        if after == After::DropSecond && served == 2 {
            return;
        }
        let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n#{served}");
        stream.write_all(answer.as_bytes()).await.unwrap();
        match after {
            After::Close => return,
            After::CloseLater => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                return;
            }
            _ => {}
        }
    }
}

fn hello(url: &str) -> Request<crate::upstream::Outgoing> {
    Request::post(url)
        .header("content-length", "5")
        .body(RequestBody::translated(Bytes::from_static(b"hello")))
        .unwrap()
}

async fn send(pool: &Pool<HttpConnector>, url: &str) -> String {
    let response = pool.request(hello(url)).await.expect("an answer");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

fn pool() -> Pool<HttpConnector> {
    Pool::new(HttpConnector::new(), Duration::from_secs(90))
}

#[tokio::test]
async fn a_kept_alive_connection_carries_the_next_requests() {
    let server = server(After::KeepAlive).await;
    let pool = pool();
    for n in 1..=3 {
        assert_eq!(send(&pool, &server.url).await, format!("#{n}"));
    }
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_connection_the_upstream_closed_while_idle_is_not_used_again() {
    let server = server(After::Close).await;
    let pool = pool();
    for _ in 0..3 {
        assert_eq!(send(&pool, &server.url).await, "#1");
        // Time for the close to arrive; the watcher drops the connection.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.accepted.load(Ordering::SeqCst), 3);
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_translated_request_whose_reused_connection_closes_unanswered_is_sent_again() {
    let server = server(After::DropSecond).await;
    let pool = pool();
    assert_eq!(send(&pool, &server.url).await, "#1");
    // Reused, read, closed without an answer: sent again on a new one.
    assert_eq!(send(&pool, &server.url).await, "#1");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let error = pool().request(hello(&url)).await.err().expect("no server");
    assert!(error.is_connect(), "{error}");
}

#[tokio::test]
async fn a_connection_closed_before_it_takes_the_request_sends_it_on_a_new_one() {
    let server = server(After::CloseLater).await;
    let pool = pool();
    assert_eq!(send(&pool, &server.url).await, "#1");
    // The test's runtime has one thread, blocked here: the watcher does not
    // run, and the close arrives unseen. Taken again, the connection reads
    // the close first, with the request still queued for it.
    std::thread::sleep(Duration::from_millis(100));
    let answer = tokio::time::timeout(Duration::from_secs(5), send(&pool, &server.url))
        .await
        .expect("an answer, not a hang");
    assert_eq!(answer, "#1");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}
