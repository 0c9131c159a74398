//! What Chat Completions clients and servers send, parsed leniently.
//!
//! Unknown fields are ignored, `null` reads as absent, and fields whose shape
//! depends on something else stay raw until the translator knows what to
//! expect. Strings borrow the input ([`Str`](crate::Str),
//! [`JsonStr`](crate::JsonStr)).

mod fields;
mod message;
mod read;
mod reply;
mod request;
mod tools;

pub use fields::unmodeled_fields;
pub use message::{
    Content, ContentPart, CustomCall, FileRef, FunctionCall, ImageUrl, Message, ToolCall,
};
#[cfg(fuzzing)]
#[doc(hidden)]
pub use read::check as read_check;
pub use reply::{
    ChatCompletion, Choice, ChoiceLogprobs, ChoiceMessage, CompletionTokensDetails,
    PromptTokensDetails, Usage,
};
pub use request::{
    ApproximateLocation, CreateChatCompletion, JsonSchema, ResponseFormat, StreamOptions,
    UserLocation, WebSearchOptions,
};
pub use tools::{
    AllowedTools, CustomDef, CustomFormat, FunctionChoice, FunctionDef, Grammar, Named, Tool,
    ToolChoice, ToolChoiceObject,
};
