//! What the bridge sends Messages clients, written strictly: `message`
//! bodies, stream events and error bodies, with exactly the fields the API
//! defines.

mod error;
mod event;
mod message;
mod write;

pub use error::{ErrorBody, ErrorDetails, ErrorObject};
pub use event::{Delta, Event, MessageDelta};
pub use message::{ContentBlock, MessageBody, OutputTokensDetails, StopReason, Usage};
