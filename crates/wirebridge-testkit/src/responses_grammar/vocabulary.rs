//! The names the grammar knows: the spec's event types, which item each
//! sub-event belongs to, and the keys every `Response` must carry.

/// Every event `type` of the spec's `ResponseStreamEvent` union.
pub const KNOWN_EVENT_TYPES: &[&str] = &[
    "response.audio.delta",
    "response.audio.done",
    "response.audio.transcript.delta",
    "response.audio.transcript.done",
    "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done",
    "response.code_interpreter_call.completed",
    "response.code_interpreter_call.in_progress",
    "response.code_interpreter_call.interpreting",
    "response.completed",
    "response.content_part.added",
    "response.content_part.done",
    "response.created",
    "error",
    "response.file_search_call.completed",
    "response.file_search_call.in_progress",
    "response.file_search_call.searching",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.shell_call_command.added",
    "response.shell_call_command.delta",
    "response.shell_call_command.done",
    "response.shell_call_output_content.delta",
    "response.shell_call_output_content.done",
    "response.in_progress",
    "response.failed",
    "response.incomplete",
    "response.output_item.added",
    "response.output_item.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.refusal.delta",
    "response.refusal.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.web_search_call.completed",
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.image_generation_call.completed",
    "response.image_generation_call.generating",
    "response.image_generation_call.in_progress",
    "response.image_generation_call.partial_image",
    "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done",
    "response.mcp_call.completed",
    "response.mcp_call.failed",
    "response.mcp_call.in_progress",
    "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "response.mcp_list_tools.in_progress",
    "response.output_text.annotation.added",
    "response.queued",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
];

/// Keys the spec marks required on `Response` that are checked for presence
/// in every lifecycle event (values may be null where the spec allows it).
pub const REQUIRED_RESPONSE_KEYS: &[&str] = &[
    "id",
    "object",
    "created_at",
    "status",
    "model",
    "output",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "metadata",
    "instructions",
    "error",
    "incomplete_details",
];

/// Sub-events that belong inside a message item.
pub(super) const MESSAGE_EVENTS: &[&str] = &[
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta",
    "response.refusal.done",
];
/// Sub-events that belong inside a reasoning item.
pub(super) const REASONING_EVENTS: &[&str] = &[
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
];
/// Sub-events that belong inside a function_call item.
pub(super) const FUNCTION_EVENTS: &[&str] = &[
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
];
/// Sub-events that belong inside a custom_tool_call item.
pub(super) const CUSTOM_EVENTS: &[&str] = &[
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
];
