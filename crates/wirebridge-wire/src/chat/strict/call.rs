//! Tool calls of assistant messages, as emitted: in a request's history and
//! in a reply body.

use std::borrow::Cow;

use serde::Serialize;

use crate::raw::JsonText;

/// A complete tool call. Requests to Chat backends carry function calls
/// only (custom tools are offered to them as functions).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCall<'a> {
    /// A function call.
    Function {
        /// Call id.
        id: Cow<'a, str>,
        /// Name and arguments.
        function: FunctionCall<'a>,
    },
    /// A custom tool call.
    Custom {
        /// Call id.
        id: Cow<'a, str>,
        /// Name and input.
        custom: CustomCall<'a>,
    },
}

/// `function` of a tool call.
#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    /// Function name.
    pub name: Cow<'a, str>,
    /// Arguments as a JSON text.
    pub arguments: JsonText<'a>,
}

/// `custom` of a custom tool call.
#[derive(Debug, Serialize)]
pub struct CustomCall<'a> {
    /// Tool name.
    pub name: Cow<'a, str>,
    /// Free-form input.
    pub input: JsonText<'a>,
}
