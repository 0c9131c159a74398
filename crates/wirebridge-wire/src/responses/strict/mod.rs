//! What the bridge sends as Responses, written strictly: request bodies,
//! `Response` objects and stream events, with exactly the fields the API
//! defines (a key the schema requires is always written).

mod event;
mod item;
mod request;
mod response;
mod write;
mod write_request;

pub use event::{
    ArgumentsEvent, ContentPartEvent, CustomInputEvent, ErrorEvent, ErrorPayload, Event, ItemEvent,
    Lifecycle, OutputTextEvent, ReasoningTextEvent, RefusalEvent, SummaryPartEvent,
    SummaryTextEvent,
};
pub use item::{
    Annotation, CompactionItem, CustomToolCall, FunctionCall, ItemStatus, MessagePhase, OutputItem,
    OutputMessage, OutputPart, ReasoningItem, ReasoningPart, ToolSearchCall,
};
pub use request::{
    AllowedTools, CompactionInput, CustomFormat, CustomTool, FunctionTool, InputItem, InputPart,
    Message, MessageContent, Reasoning, ReasoningInput, ResponsesRequest, Role, StreamOptions,
    TextFormat, TextParam, Tool, ToolCallOutput, ToolChoice, ToolOutput, ToolRef, UserLocation,
    WebSearchTool,
};
pub use response::{
    ConversationRef, IncompleteDetails, IncompleteReason, InputTokensDetails, InputTransformation,
    OutputTokensDetails, Response, ResponseEcho, ResponseError, ResponseStatus, Usage,
    WithheldReason,
};
