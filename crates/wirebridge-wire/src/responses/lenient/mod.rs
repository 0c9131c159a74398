//! What Responses clients and servers send, parsed leniently.
//!
//! Items, content parts, tools and stream events are each one flat struct
//! holding the union of the fields their variants use; fields whose shape
//! differs between variants stay raw until the item's kind is known, so an
//! item or event type this crate has never heard of still parses. Strings
//! borrow the input ([`Str`](crate::Str), [`JsonStr`](crate::JsonStr)).

mod fields;
mod item;
mod read;
mod reply;
mod reply_read;
mod request;
mod shell;

pub use fields::unmodeled_fields;
pub use item::{Content, ContentPart, InputItem, InputItems, ItemKind};
#[cfg(fuzzing)]
#[doc(hidden)]
pub use read::check as read_check;
pub use read::ReadRequest;
pub use reply::{
    IncompleteDetails, InputDetails, OutputDetails, OutputItem, ResponseBody, StreamEvent, Usage,
};
#[cfg(fuzzing)]
#[doc(hidden)]
pub use reply_read::check as reply_read_check;
pub use request::{CreateResponse, Input, Reasoning, TextFormat, TextParam, Tool};
pub use shell::{LifecycleEvent, ResponseShell};
