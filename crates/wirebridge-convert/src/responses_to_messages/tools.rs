//! Tools and the tool choice.
//!
//! Functions keep their name and schema. A custom (freeform) tool is
//! offered as a tool taking `{"input": string}`, and its calls come back as
//! `custom_tool_call` items; tools in a namespace are offered flat, as
//! `namespace__name`, and come back in their namespace. Hosted tools run
//! on OpenAI's servers, not on a Messages backend: they are reported.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::Tool as ClientTool;

use super::write::{Json, Tool, ToolChoice};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::tool_names::{ToolKind, ToolNameMap, ToolOrigin};

/// The schema of a custom tool's input.
const CUSTOM_SCHEMA: &str = r#"{"type":"object","properties":{"input":{"type":"string","description":"The tool's input, as free-form text."}},"required":["input"]}"#;
/// The schema of a function declared without one.
const EMPTY_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

/// The tools as the backend was offered them, and what each name stands
/// for.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    names: ToolNameMap,
}

impl Declared {
    /// The name the backend knows a client tool by.
    pub(super) fn backend_name(&self, name: &str, namespace: Option<&str>) -> String {
        match self.names.chat_name(name, namespace) {
            Some(known) => known.to_owned(),
            None => name.to_owned(),
        }
    }

    /// The client tool a backend name stands for, when it is not a plain
    /// function of that name.
    pub(super) fn origin(&self, backend_name: &str) -> Option<&ToolOrigin> {
        self.names.origin(backend_name)
    }
}

/// Declares `tools` for the backend.
pub(super) fn declare<'a>(
    tools: &[ClientTool<'a>],
    losses: &mut LossRecorder<'_>,
) -> Result<(Vec<Tool<'a>>, Declared), ConvertError> {
    let mut declared = Declared::default();
    let mut out = Vec::with_capacity(tools.len());
    for (n, tool) in tools.iter().enumerate() {
        let path = format!("tools[{n}]");
        match tool.kind() {
            "namespace" => {
                let namespace = tool.name.as_deref();
                for (m, inner) in tool.tools.iter().flatten().enumerate() {
                    let path = format!("{path}.tools[{m}]");
                    if let Some(t) = one(inner, namespace, &path, &mut declared, losses)? {
                        out.push(t);
                    }
                }
            }
            _ => {
                if let Some(t) = one(tool, None, &path, &mut declared, losses)? {
                    out.push(t);
                }
            }
        }
    }
    Ok((out, declared))
}

fn one<'a>(
    tool: &ClientTool<'a>,
    namespace: Option<&str>,
    path: &str,
    declared: &mut Declared,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<Tool<'a>>, ConvertError> {
    let kind = match tool.kind() {
        "function" => ToolKind::Function,
        "custom" => ToolKind::Custom,
        other => {
            losses.record(
                LossKind::HostedTool,
                path,
                format!(
                    "the `{other}` tool runs on OpenAI's servers; a Messages backend cannot run it"
                ),
            )?;
            return Ok(None);
        }
    };
    let name = tool
        .name
        .as_deref()
        .ok_or_else(|| ConvertError::invalid(format!("{path}.name"), "a tool needs its `name`"))?;
    if tool.defer_loading == Some(true) {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("{path}.defer_loading"),
            "Messages has no deferred tools; the tool is offered at once",
        )?;
    }
    if tool.strict == Some(true) {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("{path}.strict"),
            "the schema guides the backend's calls but is not enforced",
        )?;
    }
    let input_schema: Json<'a> = match kind {
        ToolKind::Custom => {
            let grammar = tool.format.is_some_and(|f| f.get().contains("\"grammar\""));
            if grammar {
                losses.record(
                    LossKind::CustomToolGrammar,
                    format!("{path}.format"),
                    "a Messages tool takes a JSON schema, not a grammar: the input is free text",
                )?;
            }
            Cow::Owned(raw(CUSTOM_SCHEMA))
        }
        _ => match tool.parameters {
            Some(schema) if schema.get() != "null" => Cow::Borrowed(schema),
            _ => Cow::Owned(raw(EMPTY_SCHEMA)),
        },
    };
    let backend_name = declared.names.register(ToolOrigin {
        name: name.to_owned(),
        namespace: namespace.map(str::to_owned),
        kind,
    });
    Ok(Some(Tool {
        name: backend_name,
        description: tool.description.map(|d| Cow::Borrowed(d.raw())),
        input_schema,
        cache_control: None,
    }))
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("valid JSON")
}

/// `tool_choice` and `parallel_tool_calls` as Messages' `tool_choice`.
pub(super) fn choice<'a>(
    choice: Option<&'a RawValue>,
    parallel: Option<bool>,
    declared: &Declared,
    any_tools: bool,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<ToolChoice<'a>>, ConvertError> {
    if !any_tools {
        return Ok(None);
    }
    let serial = (parallel == Some(false)).then_some(true);
    let plain = |kind| ToolChoice {
        kind,
        name: None,
        disable_parallel_tool_use: serial,
    };
    let Some(choice) = choice.filter(|c| c.get() != "null") else {
        return Ok(serial.map(|_| plain("auto")));
    };
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
        #[serde(borrow)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow)]
        namespace: Option<Cow<'a, str>>,
    }
    if let Ok(kind) = serde_json::from_str::<Cow<'_, str>>(choice.get()) {
        return match kind.as_ref() {
            "auto" => Ok(Some(plain("auto"))),
            "required" => Ok(Some(plain("any"))),
            "none" => Ok(Some(ToolChoice {
                kind: "none",
                name: None,
                disable_parallel_tool_use: None,
            })),
            other => Err(ConvertError::invalid(
                "tool_choice",
                format!("`{other}` is not a tool choice"),
            )),
        };
    }
    let named: Named<'_> = serde_json::from_str(choice.get())
        .map_err(|e| ConvertError::invalid("tool_choice", e.to_string()))?;
    match (named.kind.as_ref(), named.name) {
        ("function" | "custom", Some(name)) => Ok(Some(ToolChoice {
            kind: "tool",
            name: Some(Cow::Owned(
                declared.backend_name(&name, named.namespace.as_deref()),
            )),
            disable_parallel_tool_use: serial,
        })),
        ("function" | "custom", None) => Err(ConvertError::invalid(
            "tool_choice.name",
            "a named tool choice needs the tool's `name`",
        )),
        (other, _) => {
            losses.record(
                LossKind::HostedToolChoice,
                "tool_choice",
                format!("a `{other}` tool choice has no Messages form; the model chooses"),
            )?;
            Ok(serial.map(|_| plain("auto")))
        }
    }
}
