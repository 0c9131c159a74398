//! The pool against raw TCP servers on loopback, which count the
//! connections they accept and the requests they read.

use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wirebridge_tower::RequestBody;

use crate::upstream::pool::{Error, Pool};

/// How the test server treats a connection after each answer.
#[derive(Clone, Copy, PartialEq)]
enum After {
    /// Keeps it for the next request.
    KeepAlive,
    /// Closes it, without saying so in the answer.
    Close,
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
        if after == After::Close {
            return;
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
        // Time for the close to arrive: the look at checkout finds it.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.accepted.load(Ordering::SeqCst), 3);
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_request_whose_reused_connection_closes_after_reading_it_is_not_sent_again() {
    let server = server(After::DropSecond).await;
    let pool = pool();
    assert_eq!(send(&pool, &server.url).await, "#1");
    // Reused, read, closed without an answer: the upstream has it.
    let error = pool
        .request(hello(&server.url))
        .await
        .err()
        .expect("no answer");
    assert!(matches!(error, Error::Exchange(_)), "{error}");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let error = pool().request(hello(&url)).await.err().expect("no server");
    assert!(error.is_connect(), "{error}");
}

/// What the thread server does on its first connection once told.
enum Then {
    /// Writes an answer nobody asked for.
    Stray,
    /// Closes the connection.
    Close,
}

/// An upstream on a thread of its own that echoes each request's body, and
/// after its first answer waits to be told what to do next.
fn thread_server() -> (String, mpsc::Sender<Then>, mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/chat", listener.local_addr().unwrap());
    let (tell, told) = mpsc::channel();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let mut first = Some((told, done));
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let first = first.take();
            std::thread::spawn(move || {
                let answer = |text: &str| {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{text}",
                        text.len()
                    )
                };
                let mut turn = 0;
                while let Some(body) = read_request(&mut stream) {
                    turn += 1;
                    stream.write_all(answer(&body).as_bytes()).unwrap();
                    let Some((told, done)) = first.as_ref().filter(|_| turn == 1) else {
                        continue;
                    };
                    match told.recv().unwrap() {
                        Then::Stray => {
                            let stray = answer(&format!("stray {body}"));
                            stream.write_all(stray.as_bytes()).unwrap();
                            done.send(()).unwrap();
                        }
                        Then::Close => {
                            drop(stream);
                            done.send(()).unwrap();
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, tell, finished)
}

fn read_request(stream: &mut std::net::TcpStream) -> Option<String> {
    let mut read = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&read[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |n| n.trim().parse().unwrap());
            if read.len() >= end + 4 + length {
                return Some(String::from_utf8_lossy(&read[end + 4..end + 4 + length]).into());
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => read.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn echo(pool: &Pool<HttpConnector>, url: &str, text: &'static str) -> String {
    let request = Request::post(url)
        .body(RequestBody::translated(Bytes::from_static(text.as_bytes())))
        .unwrap();
    let response = pool.request(request).await.expect("an answer");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

/// The upstream closes an idle connection while the runtime is busy (here:
/// its one thread is blocked), so the runtime has not seen the close. The
/// socket itself knows, and is asked at checkout.
#[tokio::test]
async fn a_close_the_runtime_has_not_seen_is_found_at_checkout() {
    let (url, tell, done) = thread_server();
    let pool = pool();
    assert_eq!(echo(&pool, &url, "m1").await, "m1");
    tell.send(Then::Close).unwrap();
    done.recv().unwrap();
    // Time for loopback to hand the close to the socket; the runtime, on
    // this one blocked thread, does not look meanwhile.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(echo(&pool, &url, "m2").await, "m2");
}

/// The upstream writes an answer nobody asked for on an idle connection
/// while the runtime is busy, so the runtime has not seen it arrive. Taken
/// for the next request, the connection would carry that request out and
/// bring back the stray answer as its reply.
#[tokio::test]
async fn a_stray_answer_the_runtime_has_not_seen_is_never_read_as_the_next_reply() {
    let (url, tell, done) = thread_server();
    let pool = pool();
    assert_eq!(echo(&pool, &url, "m1").await, "m1");
    tell.send(Then::Stray).unwrap();
    done.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(echo(&pool, &url, "m2").await, "m2");
}
