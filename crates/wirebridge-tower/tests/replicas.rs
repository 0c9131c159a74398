//! The replica router as a service: a request that could not be sent goes
//! to the next replica, one that was sent never goes twice, a replica that
//! keeps failing is ejected, and a stream counts in flight until it ends.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tower::{service_fn, Service, ServiceExt};
use wirebridge_tower::{Affinity, NotSent, ReplicaEvents, Replicas, RequestBody};

type Body = Full<Bytes>;

/// How each replica behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    Answers,
    Refuses,
    Fails,
}

/// Replicas named `r0`, `r1`, …, each counting the requests it got and
/// behaving as `behaviours` say (changeable while they run).
struct Set {
    got: Arc<Vec<AtomicUsize>>,
    behaviours: Arc<Mutex<Vec<Behaviour>>>,
}

impl Set {
    fn new(n: usize) -> Self {
        Self {
            got: Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect()),
            behaviours: Arc::new(Mutex::new(vec![Behaviour::Answers; n])),
        }
    }

    fn replicas(
        &self,
    ) -> Replicas<
        impl Service<
                Request<RequestBody<Body>>,
                Response = Response<Body>,
                Error = Infallible,
                Future = impl Send,
            > + Clone
            + Send
            + Sync,
    > {
        let n = self.got.len();
        Replicas::new(
            (0..n)
                .map(|index| {
                    let got = Arc::clone(&self.got);
                    let behaviours = Arc::clone(&self.behaviours);
                    let service = service_fn(move |_: Request<RequestBody<Body>>| {
                        let behaviour = behaviours.lock().unwrap()[index];
                        let got = Arc::clone(&got);
                        async move {
                            let mut response =
                                Response::new(Full::new(Bytes::from(format!("r{index}"))));
                            match behaviour {
                                Behaviour::Answers => {
                                    got[index].fetch_add(1, Ordering::SeqCst);
                                }
                                Behaviour::Fails => {
                                    got[index].fetch_add(1, Ordering::SeqCst);
                                    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                                }
                                Behaviour::Refuses => {
                                    *response.status_mut() = StatusCode::BAD_GATEWAY;
                                    response.extensions_mut().insert(NotSent);
                                }
                            }
                            Ok::<_, Infallible>(response)
                        }
                    });
                    (format!("http://replica-{index}:8000/v1"), service)
                })
                .collect(),
        )
    }

    fn got(&self) -> Vec<usize> {
        self.got.iter().map(|n| n.load(Ordering::SeqCst)).collect()
    }

    fn set(&self, replica: usize, behaviour: Behaviour) {
        self.behaviours.lock().unwrap()[replica] = behaviour;
    }
}

fn translated(key: &str) -> Request<RequestBody<Body>> {
    let mut request = Request::new(RequestBody::translated(Bytes::from("{}")));
    request.extensions_mut().insert(Affinity::conversation(key));
    request
}

fn passed_through(key: &str) -> Request<RequestBody<Body>> {
    let mut request = Request::new(RequestBody::original(Full::new(Bytes::from("{}"))));
    request.extensions_mut().insert(Affinity::conversation(key));
    request
}

/// The replica that answered, and the status.
async fn send<S>(replicas: &S, request: Request<RequestBody<Body>>) -> (String, StatusCode)
where
    S: Service<
            Request<RequestBody<Body>>,
            Response = Response<wirebridge_tower::InFlightBody<Body>>,
        > + Clone,
    S::Error: std::fmt::Debug,
{
    let response = replicas.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (String::from_utf8(body.to_vec()).unwrap(), status)
}

/// Events as text, in order.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<String>>>);

impl ReplicaEvents for Told {
    fn failed_over(&self, from: usize, to: usize) {
        self.0
            .lock()
            .unwrap()
            .push(format!("failed over {from}->{to}"));
    }
    fn ejected(&self, replica: usize, failures: usize) {
        self.0
            .lock()
            .unwrap()
            .push(format!("ejected {replica} after {failures}"));
    }
    fn returned(&self, replica: usize) {
        self.0.lock().unwrap().push(format!("returned {replica}"));
    }
    fn spilled(&self, from: usize, to: usize) {
        self.0.lock().unwrap().push(format!("spilled {from}->{to}"));
    }
}

#[tokio::test]
async fn a_refused_connection_goes_to_the_next_replica_and_the_key_follows() {
    let set = Set::new(3);
    let told = Told::default();
    let replicas = set.replicas().events(told.clone());
    let (home, _) = send(&replicas, translated("c1")).await;
    let home: usize = home[1..].parse().unwrap();
    set.set(home, Behaviour::Refuses);
    let (moved, status) = send(&replicas, translated("c1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(moved, format!("r{home}"));
    let moved: usize = moved[1..].parse().unwrap();
    assert_eq!(
        told.0.lock().unwrap().as_slice(),
        [format!("failed over {home}->{moved}")]
    );
    // The key stays where it went, even once its first replica is back.
    set.set(home, Behaviour::Answers);
    for _ in 0..3 {
        assert_eq!(
            send(&replicas, translated("c1")).await.0,
            format!("r{moved}")
        );
    }
}

#[tokio::test]
async fn a_body_that_cannot_be_sent_again_is_not_tried_elsewhere() {
    let set = Set::new(2);
    let replicas = set.replicas();
    let (home, _) = send(&replicas, passed_through("c2")).await;
    let home: usize = home[1..].parse().unwrap();
    set.set(home, Behaviour::Refuses);
    let (_, status) = send(&replicas, passed_through("c2")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    // Only the first request reached a replica.
    assert_eq!(set.got().iter().sum::<usize>(), 1);
}

#[tokio::test]
async fn a_failing_replica_is_ejected_and_returns_after_the_backoff() {
    let set = Set::new(2);
    let told = Told::default();
    let replicas = set
        .replicas()
        .eject_after(2)
        .backoff(Duration::from_millis(200))
        .events(told.clone());
    let health = replicas.health();
    let (home, _) = send(&replicas, translated("c3")).await;
    let home: usize = home[1..].parse().unwrap();
    set.set(home, Behaviour::Fails);
    // A 5xx is the replica's answer: passed on, never sent again.
    for _ in 0..2 {
        let (_, status) = send(&replicas, translated("c3")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    }
    assert_eq!(set.got()[home], 3);
    assert!(!health.ready()[home]);
    assert_eq!(
        told.0.lock().unwrap().as_slice(),
        [format!("ejected {home} after 2")]
    );
    let other = 1 - home;
    assert_eq!(
        send(&replicas, translated("c3")).await.0,
        format!("r{other}")
    );
    set.set(home, Behaviour::Answers);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Back: new keys may go to it again, and its health says so.
    let _ = send(&replicas, translated("c-new")).await;
    assert!(health.ready()[home]);
    assert!(told.0.lock().unwrap().contains(&format!("returned {home}")));
}

#[tokio::test]
async fn a_stream_counts_in_flight_until_its_body_ends() {
    let set = Set::new(3);
    let told = Told::default();
    let replicas = set.replicas().events(told.clone());
    let (home, _) = send(&replicas, translated("c4")).await;
    // Six replies held open on the key's replica (bodies not read), the
    // others idle: the bound is 1.25 × 2 + 1, six is past it by more than
    // the slack of 2, and the next request spills.
    let mut held = Vec::new();
    for _ in 0..6 {
        let response = replicas.clone().oneshot(translated("c4")).await.unwrap();
        held.push(response);
    }
    let (spilled, _) = send(&replicas, translated("c4")).await;
    assert_ne!(spilled, home);
    assert!(told.0.lock().unwrap()[0].starts_with("spilled"));
    // Read to their end, they no longer count.
    for response in held {
        response.into_body().collect().await.unwrap();
    }
    let (after, _) = send(&replicas, translated("c4")).await;
    assert_eq!(after, spilled, "the key stays where it was re-pinned");
}
