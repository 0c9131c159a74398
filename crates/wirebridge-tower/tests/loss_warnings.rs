//! A loss repeated on every exchange is warned about once per layer: later
//! exchanges log it at `debug`, and still report it in their header.

mod common;

use std::fmt;
use std::sync::{Arc, Mutex};

use common::{body, read, upstream, Seen};
use http::{Request, StatusCode};
use tower::{Layer, ServiceExt};
use tracing::field::{Field, Visit};
use tracing::{span, Event, Level, Metadata};
use wirebridge_tower::{ResponsesToChatLayer, DROPPED_HEADER};

const LOSS_MESSAGE: &str = "fields could not be translated and were dropped";

/// Records the level, message and `dropped` field of every event.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Logged>>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Logged {
    level: Level,
    message: String,
    dropped: Option<String>,
}

impl Recorder {
    /// The loss lines logged so far, as (level, dropped).
    fn losses(&self) -> Vec<(Level, String)> {
        let logged = self.0.lock().unwrap();
        logged
            .iter()
            .filter(|l| l.message == LOSS_MESSAGE)
            .map(|l| (l.level, l.dropped.clone().unwrap_or_default()))
            .collect()
    }
}

impl Visit for Logged {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "dropped" => self.dropped = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut logged = Logged {
            level: *event.metadata().level(),
            message: String::new(),
            dropped: None,
        };
        event.record(&mut logged);
        self.0.lock().unwrap().push(logged);
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

const REPLY: &str = r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}"#;

#[tokio::test]
async fn a_repeated_loss_is_warned_once_per_layer_and_reported_every_time() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let layer = ResponsesToChatLayer::new();
    let upstream = upstream(
        StatusCode::OK,
        "application/json",
        REPLY.as_bytes().to_vec(),
        1,
        Seen::default(),
    );
    let service = layer.layer(upstream.clone());
    let metadata = r#"{"model":"m","input":"hi","metadata":{"k":"v"}}"#;
    let both = r#"{"model":"m","input":"hi","truncation":"auto","metadata":{"k":"v"}}"#;
    // The same set, the fields sent in another order.
    let both_again = r#"{"model":"m","input":"hi","metadata":{"k":"v"},"truncation":"auto"}"#;
    let mut headers = Vec::new();
    for json in [metadata, metadata, both, both_again, metadata] {
        let request = Request::post("/v1/responses").body(body(json)).unwrap();
        let (status, head, _) = read(service.clone().oneshot(request).await.unwrap()).await;
        assert_eq!(status, 200);
        headers.push(head[DROPPED_HEADER].to_str().unwrap().to_owned());
    }
    assert_eq!(
        headers,
        [
            "metadata",
            "metadata",
            "metadata, truncation",
            "metadata, truncation",
            "metadata"
        ],
        "every exchange reports its losses"
    );
    assert_eq!(
        recorder.losses(),
        [
            (Level::WARN, "metadata".to_owned()),
            (Level::DEBUG, "metadata".to_owned()),
            (Level::WARN, "metadata, truncation".to_owned()),
            (Level::DEBUG, "metadata, truncation".to_owned()),
            (Level::DEBUG, "metadata".to_owned()),
        ]
    );

    // Another layer remembers nothing of the first one's warnings.
    let other = ResponsesToChatLayer::new().layer(upstream);
    let request = Request::post("/v1/responses").body(body(metadata)).unwrap();
    read(other.oneshot(request).await.unwrap()).await;
    assert_eq!(
        recorder.losses().last(),
        Some(&(Level::WARN, "metadata".to_owned()))
    );
}
