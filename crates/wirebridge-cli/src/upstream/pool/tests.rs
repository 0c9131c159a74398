//! The pool against a scripted upstream over in-memory streams ([`mock`]),
//! and against real sockets on loopback ([`tcp`]).

mod mock;
mod tcp;

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::BodyExt;
use wirebridge_tower::RequestBody;

use super::*;
use mock::{answer, answer_with, MockIo, Reply, Upstream};

type MockPool = Pool<mock::Connector>;

fn pool(upstream: &Upstream) -> MockPool {
    Pool::new(upstream.connector(), Duration::from_secs(90))
}

/// A translated request whose body is `text`.
fn request(text: &str) -> Request<Outgoing> {
    Request::post("http://upstream.test/v1/chat/completions")
        .body(RequestBody::translated(Bytes::from(text.to_owned())))
        .unwrap()
}

async fn answered(pool: &MockPool, text: &str) -> Response<DrivenBody<MockIo>> {
    pool.request(request(text)).await.expect("an answer")
}

/// Sends `text` and reads the whole answer.
async fn send(pool: &MockPool, text: &str) -> String {
    let body = answered(pool, text).await.into_body();
    let bytes = body.collect().await.expect("a whole body").to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn a_connection_is_reused_after_a_clean_answer() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    for n in 1..=3 {
        assert_eq!(send(&pool, &format!("m{n}")).await, format!("m{n}"));
        assert_eq!(pool.idle(), 1);
    }
    assert_eq!(upstream.connections(), 1);
}

#[tokio::test]
async fn two_clients_never_share_a_connection() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    let from = |client: u64, text: &str| {
        let mut request = request(text);
        request.extensions_mut().insert(Partition(client));
        request
    };
    for (client, text) in [(1, "a1"), (2, "b1"), (1, "a2"), (2, "b2")] {
        let answer = pool.request(from(client, text)).await.expect("an answer");
        let bytes = answer.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(bytes, text.as_bytes());
    }
    // One connection each, each reused by its own client only.
    assert_eq!(upstream.connections(), 2);
    assert_eq!(pool.idle(), 2);
}

#[tokio::test]
async fn an_answer_that_says_close_closes_its_connection() {
    // The upstream says so, but leaves its end open.
    let upstream = Upstream::new(|t| Reply::Answer(answer_with(&t.body, "connection: close\r\n")));
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    upstream.closed(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn a_body_that_fails_closes_its_connection() {
    let upstream = Upstream::new(|t| match t.connection {
        0 => Reply::Answer(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n".to_vec()),
        _ => Reply::Answer(answer(&t.body)),
    });
    let pool = pool(&upstream);
    let body = answered(&pool, "m1").await.into_body();
    assert!(body.collect().await.is_err(), "a bad chunk is an error");
    upstream.closed(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn a_body_dropped_before_its_end_closes_its_connection() {
    // Half the body, and the connection kept open.
    let upstream = Upstream::new(|t| match t.connection {
        0 => Reply::Answer(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n12345".to_vec()),
        _ => Reply::Answer(answer(&t.body)),
    });
    let pool = pool(&upstream);
    let mut body = answered(&pool, "m1").await.into_body();
    let first = body.frame().await.expect("a frame").expect("data");
    assert_eq!(first.into_data().unwrap(), "12345");
    drop(body);
    upstream.closed(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn a_body_never_read_closes_its_connection() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    drop(answered(&pool, "m1").await);
    upstream.closed(0).await;
    assert_eq!(pool.idle(), 0);
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn an_upstream_that_closes_as_it_answers_is_not_used_again() {
    let upstream = Upstream::new(|t| Reply::Close(answer(&t.body)));
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
    assert_eq!(upstream.requests(), ["m1", "m2"]);
}

/// The close comes while the connection is idle, and the runtime has not
/// seen it (reads hidden): the look at checkout finds it.
#[tokio::test]
async fn an_idle_connection_the_upstream_closed_is_not_used_again() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    upstream
        .switches(0)
        .hide_reads
        .store(true, Ordering::SeqCst);
    upstream.close(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
    assert_eq!(upstream.requests(), ["m1", "m2"]);
}

#[tokio::test(start_paused = true)]
async fn the_sweep_drops_an_idle_connection_the_upstream_closes() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    assert_eq!(pool.idle(), 1);
    upstream.close(0).await;
    assert_eq!(pool.idle(), 1, "kept until the next sweep");
    tokio::time::sleep(SWEEP_EVERY + Duration::from_millis(10)).await;
    assert_eq!(pool.idle(), 0, "the sweep drops it");
    // The sweep has ended with nothing left to look at; the next
    // connection kept starts it again.
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(pool.idle(), 1);
    upstream.close(1).await;
    tokio::time::sleep(SWEEP_EVERY + Duration::from_millis(10)).await;
    assert_eq!(pool.idle(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_sweep_keeps_a_connection_still_open() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    tokio::time::sleep(3 * SWEEP_EVERY).await;
    assert_eq!(pool.idle(), 1);
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 1);
}

#[tokio::test]
async fn no_more_than_max_idle_connections_are_kept() {
    let upstream = Upstream::echo();
    let pool = Pool::with_limits(upstream.connector(), Duration::from_secs(90), 2);
    // Four exchanges at once: four connections.
    let mut open = Vec::new();
    for n in 1..=4 {
        open.push(answered(&pool, &format!("m{n}")).await);
    }
    assert_eq!(upstream.connections(), 4);
    for response in open {
        response.into_body().collect().await.unwrap();
    }
    assert_eq!(pool.idle(), 2);
    for n in 2..=3 {
        upstream.closed(n).await;
    }
    // The two kept are reused.
    let again = [answered(&pool, "m5").await, answered(&pool, "m6").await];
    assert_eq!(upstream.connections(), 4);
    drop(again);
}

#[tokio::test]
async fn a_connection_idle_too_long_is_not_reused() {
    let upstream = Upstream::echo();
    let pool = Pool::with_limits(upstream.connector(), Duration::ZERO, 4);
    assert_eq!(send(&pool, "m1").await, "m1");
    assert_eq!(send(&pool, "m2").await, "m2");
    upstream.closed(0).await;
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn an_answer_nobody_asked_for_that_came_with_the_last_one_is_never_read_as_the_next() {
    let upstream = Upstream::new(|t| {
        let mut bytes = answer(&t.body);
        bytes.extend(answer(&format!("again {}", t.body)));
        Reply::Answer(bytes)
    });
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    assert_eq!(pool.idle(), 0);
    upstream.closed(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}

/// The upstream writes an answer nobody asked for on an idle connection,
/// and the runtime has not seen it arrive (its reads are hidden until the
/// pool writes again): only the look into the transport at checkout finds
/// it. Were the connection reused, the next request's write would reveal
/// the stray answer, read as that request's.
#[tokio::test]
async fn an_answer_nobody_asked_for_that_the_runtime_has_not_seen_is_found_at_checkout() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    upstream
        .switches(0)
        .hide_reads
        .store(true, Ordering::SeqCst);
    upstream.push(0, answer("stray m1")).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    upstream.closed(0).await;
    assert_eq!(upstream.connections(), 2);
    assert_eq!(upstream.requests(), ["m1", "m2"]);
}

/// A reused connection that the upstream closes after reading a request,
/// without answering: the request reached the upstream, which may have
/// acted on it. It is not sent again.
#[tokio::test]
async fn a_request_the_upstream_may_have_read_is_never_sent_twice() {
    let upstream = Upstream::new(|t| match t.on_connection {
        1 => Reply::Answer(answer(&t.body)),
        _ => Reply::Close(Vec::new()),
    });
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    let error = pool.request(request("m2")).await.err().expect("no answer");
    assert!(matches!(error, Error::Exchange(_)), "{error}");
    assert_eq!(upstream.requests(), ["m1", "m2"], "m2 sent once");
    assert_eq!(upstream.connections(), 1);
}

/// A reused connection whose first write fails: not one byte of the
/// request left, so it goes on a new connection.
#[tokio::test]
async fn a_request_none_of_whose_bytes_left_is_sent_on_a_new_connection() {
    let upstream = Upstream::echo();
    let pool = pool(&upstream);
    assert_eq!(send(&pool, "m1").await, "m1");
    upstream
        .switches(0)
        .fail_writes
        .store(true, Ordering::SeqCst);
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.requests(), ["m1", "m2"]);
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn an_answer_with_both_length_and_chunked_is_refused_and_its_connection_closed() {
    let upstream = Upstream::new(|t| {
        match t.connection {
        0 => Reply::Answer(
            b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                .to_vec(),
        ),
        _ => Reply::Answer(answer(&t.body)),
    }
    });
    let pool = pool(&upstream);
    let error = pool.request(request("m1")).await.err().expect("refused");
    assert!(matches!(error, Error::Framing), "{error}");
    upstream.closed(0).await;
    assert_eq!(send(&pool, "m2").await, "m2");
    assert_eq!(upstream.connections(), 2);
}
