//! What the fuzz targets reach of WebSocket mode, compiled only under
//! `--cfg fuzzing` (as cargo-fuzz builds): how one text message from a
//! client is read, and what the client is answered before any turn runs.

use super::client_event::{self, ClientEvent};
use super::server_event::{error_event, steer_failed};

/// What a client's text message comes to.
#[derive(Debug)]
pub enum ClientMessage {
    /// A turn to run (`response.create`).
    Turn {
        /// The body of the `POST /v1/responses` the turn runs.
        body: Vec<u8>,
        /// The lane the client named.
        stream_id: Option<String>,
        /// `false` for a warm-up (`generate: false`).
        generate: bool,
        /// The response the turn continues, as read for the turn's lookup.
        previous_response_id: Option<String>,
    },
    /// Answered at once with this text message: the error event of a
    /// refusal, or the failure of a steer.
    Answered(String),
    /// Needs no answer (`response.processed`).
    Ignored,
}

/// Reads a client's text message as the session does.
pub fn client_message(text: &str) -> ClientMessage {
    match client_event::parse(text) {
        Ok(ClientEvent::Create(create)) => ClientMessage::Turn {
            body: create.body,
            stream_id: create.stream_id,
            generate: create.generate,
            previous_response_id: create.previous_response_id,
        },
        Ok(ClientEvent::Steer(steer)) => ClientMessage::Answered(steer_failed(&steer)),
        Ok(ClientEvent::Ignored) => ClientMessage::Ignored,
        Err(rejected) => ClientMessage::Answered(error_event(
            &rejected.rejection,
            rejected.stream_id.as_deref(),
        )),
    }
}
