//! What the bridge sends as Chat Completions, written strictly: only fields
//! the API defines, each written only when set.

mod call;
mod reply;
mod request;
mod write;

pub use call::{CustomCall, FunctionCall, ToolCall};
pub use reply::{
    Annotation, BodyChoice, ChatChunk, ChoiceLogprobs, ChunkChoice, ChunkUsage, CompletionBody,
    CompletionDetails, CompletionUsage, CustomChunk, Delta, FunctionChunk, PromptDetails,
    ReplyMessage, ToolCallChunk, UrlCitation,
};
pub use request::{
    ChatMessage, ChatPart, ChatRequest, ChatTool, ChatToolChoice, FileRef, FunctionDef, ImageUrl,
    JsonSchemaFormat, MessageContent, NamedFunction, ResponseFormat, Role, StreamOptions,
    UserLocation, WebSearchOptions,
};
