//! Tool definitions and tool choices of a Chat request, parsed leniently.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;
use crate::Str;

/// One entry of `tools`: `{type: function, function}` or
/// `{type: custom, custom}`.
#[derive(Debug, Default, Deserialize)]
pub struct Tool<'a> {
    /// Tool type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The function of a function tool.
    #[serde(borrow)]
    pub function: Option<FunctionDef<'a>>,
    /// The definition of a custom tool.
    #[serde(borrow)]
    pub custom: Option<CustomDef<'a>>,
}

impl Tool<'_> {
    /// The tool type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

/// A function definition (`tools[].function`, or an entry of `functions`).
#[derive(Debug, Default, Deserialize)]
pub struct FunctionDef<'a> {
    /// Name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
    /// JSON Schema of the arguments, passed through untouched.
    #[serde(borrow)]
    pub parameters: Option<&'a RawValue>,
    /// Strict schema adherence.
    pub strict: Option<bool>,
}

/// A custom tool definition.
#[derive(Debug, Default, Deserialize)]
pub struct CustomDef<'a> {
    /// Name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
    /// Input format: `{type: text}` or `{type: grammar, grammar}`.
    #[serde(borrow)]
    pub format: Option<CustomFormat<'a>>,
}

/// A custom tool's input format.
#[derive(Debug, Default, Deserialize)]
pub struct CustomFormat<'a> {
    /// `text` or `grammar`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The grammar of a `grammar` format.
    #[serde(borrow)]
    pub grammar: Option<Grammar<'a>>,
    /// The grammar definition, when a client sends it flat (Responses shape).
    #[serde(borrow)]
    pub definition: Option<JsonStr<'a>>,
    /// The grammar syntax, when a client sends it flat (Responses shape).
    #[serde(borrow)]
    pub syntax: Option<Str<'a>>,
}

/// `{definition, syntax}` of a grammar format.
#[derive(Debug, Default, Deserialize)]
pub struct Grammar<'a> {
    /// The grammar definition.
    #[serde(borrow)]
    pub definition: Option<JsonStr<'a>>,
    /// `lark` or `regex`.
    #[serde(borrow)]
    pub syntax: Option<Str<'a>>,
}

/// `tool_choice`, once known to be an object.
#[derive(Debug, Default, Deserialize)]
pub struct ToolChoiceObject<'a> {
    /// `function`, `custom` or `allowed_tools`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The function of a named function choice.
    #[serde(borrow)]
    pub function: Option<Named<'a>>,
    /// The tool of a named custom choice.
    #[serde(borrow)]
    pub custom: Option<Named<'a>>,
    /// The name, when a client sends it flat (Responses shape).
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// The set of an `allowed_tools` choice.
    #[serde(borrow)]
    pub allowed_tools: Option<AllowedTools<'a>>,
}

impl ToolChoiceObject<'_> {
    /// The choice type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// The tool named by `function.name`, `custom.name` or a flat `name`.
    pub fn tool_name(&self) -> Option<&str> {
        self.function
            .as_ref()
            .or(self.custom.as_ref())
            .and_then(|n| n.name.as_deref())
            .or(self.name.as_deref())
    }
}

/// `tool_choice`: a mode or an object.
#[derive(Debug)]
pub enum ToolChoice<'a> {
    /// `none`, `auto` or `required`.
    Mode(Str<'a>),
    /// A named tool or an allowed set.
    Object(ToolChoiceObject<'a>),
}

impl<'a> ToolChoice<'a> {
    /// Parses a raw `tool_choice`; `null` gives `None`.
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        match raw.get().as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'"') => serde_json::from_str(raw.get()).map(|m| Some(ToolChoice::Mode(m))),
            _ => serde_json::from_str(raw.get()).map(|o| Some(ToolChoice::Object(o))),
        }
    }
}

/// `{name}`.
#[derive(Debug, Default, Deserialize)]
pub struct Named<'a> {
    /// The name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
}

/// `allowed_tools` of an allowed-tools choice.
#[derive(Debug, Default, Deserialize)]
pub struct AllowedTools<'a> {
    /// `auto` or `required`.
    #[serde(borrow)]
    pub mode: Option<Str<'a>>,
    /// The allowed tools: `{type: function, function: {name}}` or
    /// `{type: custom, custom: {name}}`.
    #[serde(borrow)]
    pub tools: Option<Vec<ToolChoiceObject<'a>>>,
}

/// The legacy `function_call` request parameter.
#[derive(Debug)]
pub enum FunctionChoice<'a> {
    /// `none` or `auto`.
    Mode(Str<'a>),
    /// `{name}`: call this function.
    Named(Named<'a>),
}

impl<'a> FunctionChoice<'a> {
    /// Parses a raw `function_call`; `null` gives `None`.
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        match raw.get().as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'"') => serde_json::from_str(raw.get()).map(|m| Some(FunctionChoice::Mode(m))),
            _ => serde_json::from_str(raw.get()).map(|n| Some(FunctionChoice::Named(n))),
        }
    }
}
