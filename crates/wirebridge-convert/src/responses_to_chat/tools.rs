//! Responses `tools` and `tool_choice` → Chat.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::chat::request::{
    ChatTool, ChatToolChoice, FunctionDef, NamedFunction, WebSearchOptions,
};
use wirebridge_wire::responses::request::Tool;

use crate::error::ConvertError;
use crate::loss::{LossKind, LossRecorder};
use crate::profile::BackendProfile;
use crate::tool_names::{ToolNameMap, ToolOrigin};

pub(super) struct TranslatedTools<'a> {
    pub(super) tools: Vec<ChatTool<'a>>,
    pub(super) choice: Option<ChatToolChoice<'a>>,
    pub(super) web_search: Option<WebSearchOptions<'a>>,
    pub(super) names: ToolNameMap,
}

pub(super) fn translate_tools<'a>(
    tools: &[Tool<'a>],
    tool_choice: Option<&'a RawValue>,
    profile: &BackendProfile,
    losses: &mut LossRecorder<'_>,
) -> Result<TranslatedTools<'a>, ConvertError> {
    let mut out = TranslatedTools {
        tools: Vec::with_capacity(tools.len()),
        choice: None,
        web_search: None,
        names: ToolNameMap::default(),
    };
    for (i, tool) in tools.iter().enumerate() {
        let path = format!("tools[{i}]");
        match tool.kind() {
            "function" | "custom" => {
                let def = function(tool, None, &path, &mut out.names, losses)?;
                out.tools.push(def);
            }
            "namespace" => {
                let namespace = tool
                    .name
                    .as_deref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
                for (j, inner) in tool.tools.iter().flatten().enumerate() {
                    let inner_path = format!("{path}.tools[{j}]");
                    match inner.kind() {
                        "function" | "custom" => {
                            let def = function(inner, Some(namespace), &inner_path, &mut out.names, losses)?;
                            out.tools.push(def);
                        }
                        other => losses.record(
                            LossKind::HostedTool,
                            inner_path,
                            format!("'{other}' tools inside a namespace cannot be offered to a Chat backend"),
                        )?,
                    }
                }
            }
            "web_search"
            | "web_search_2025_08_26"
            | "web_search_preview"
            | "web_search_preview_2025_03_11"
                if profile.web_search_options =>
            {
                if tool.external_web_access == Some(false) {
                    losses.record(
                        LossKind::UnsupportedParameter,
                        format!("{path}.external_web_access"),
                        "Chat web search cannot be limited to cached results",
                    )?;
                }
                out.web_search = Some(WebSearchOptions {
                    user_location: tool.user_location.and_then(chat_user_location),
                    search_context_size: tool.search_context_size.filter(|r| r.get() != "null"),
                });
            }
            "" => return Err(ConvertError::MissingField(format!("{path}.type"))),
            other => losses.record(
                LossKind::HostedTool,
                path,
                format!("'{other}' is a hosted tool this backend cannot run"),
            )?,
        }
    }
    if let Some(raw) = tool_choice.filter(|r| r.get() != "null") {
        out.choice = choice(raw, &mut out, losses)?;
    }
    Ok(out)
}

/// A Responses location (`{type, city, country, region, timezone}`) in
/// Chat's nesting (`{type: "approximate", approximate: {city, …}}`).
fn chat_user_location(raw: &RawValue) -> Option<Box<RawValue>> {
    let mut location: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(raw.get()).ok()?;
    location.remove("type");
    let nested = serde_json::json!({ "type": "approximate", "approximate": location });
    serde_json::value::to_raw_value(&nested).ok()
}

fn function<'a>(
    tool: &Tool<'a>,
    namespace: Option<&str>,
    path: &str,
    names: &mut ToolNameMap,
    losses: &mut LossRecorder<'_>,
) -> Result<ChatTool<'a>, ConvertError> {
    let name = tool
        .name
        .as_deref()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
    let custom = tool.kind() == "custom";
    let chat_name = names.register(ToolOrigin {
        name: name.to_owned(),
        namespace: namespace.map(str::to_owned),
        custom,
    });
    let chat_name = if chat_name == name {
        tool.name.clone().unwrap_or_default()
    } else {
        Cow::Owned(chat_name)
    };
    let def = if custom {
        FunctionDef {
            name: chat_name,
            description: tool.description.map(Into::into),
            parameters: Some(Cow::Owned(custom_parameters(tool.format, path, losses)?)),
            strict: None,
        }
    } else {
        FunctionDef {
            name: chat_name,
            description: tool.description.map(Into::into),
            parameters: tool
                .parameters
                .filter(|p| p.get() != "null")
                .map(Cow::Borrowed),
            strict: tool.strict,
        }
    };
    Ok(ChatTool {
        tool_type: "function",
        function: def,
    })
}

/// The schema of the function a custom tool becomes: one string, `input`.
/// A grammar cannot be enforced by a Chat backend, so it is written into the
/// parameter's description for the model to follow.
fn custom_parameters(
    format: Option<&RawValue>,
    path: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<Box<RawValue>, ConvertError> {
    #[derive(Deserialize, Default)]
    struct Format<'b> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Cow<'b, str>>,
        #[serde(borrow, default)]
        syntax: Option<Cow<'b, str>>,
        #[serde(borrow, default)]
        definition: Option<Cow<'b, str>>,
    }
    let format: Format<'_> = match format.filter(|f| f.get() != "null") {
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| ConvertError::from_parse_at(&format!("{path}.format"), e))?,
        None => Format::default(),
    };
    let description = match (format.kind.as_deref(), &format.definition) {
        (Some("grammar"), Some(definition)) => {
            let syntax = format.syntax.as_deref().unwrap_or("grammar");
            losses.record(
                LossKind::CustomToolGrammar,
                format!("{path}.format"),
                "the grammar is given to the model in the parameter description, not enforced",
            )?;
            format!(
                "The raw input for this tool. It must follow this {syntax} grammar:\n{definition}"
            )
        }
        _ => "The raw input for this tool, as free-form text.".to_owned(),
    };
    let schema = serde_json::json!({
        "type": "object",
        "properties": { "input": { "type": "string", "description": description } },
        "required": ["input"],
        "additionalProperties": false,
    });
    Ok(serde_json::value::to_raw_value(&schema).expect("values serialize"))
}

#[derive(Deserialize)]
struct ChoiceObject<'b> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'b, str>,
    #[serde(borrow, default)]
    name: Option<Cow<'b, str>>,
    #[serde(borrow, default)]
    mode: Option<Cow<'b, str>>,
    #[serde(borrow, default)]
    tools: Option<Vec<ChoiceObject<'b>>>,
    #[serde(borrow, default)]
    function: Option<NamedChoice<'b>>,
}

#[derive(Deserialize)]
struct NamedChoice<'b> {
    #[serde(borrow)]
    name: Cow<'b, str>,
}

impl ChoiceObject<'_> {
    fn function_name(&self) -> Option<&str> {
        self.name
            .as_deref()
            .or(self.function.as_ref().map(|f| f.name.as_ref()))
    }
}

fn choice<'a>(
    raw: &'a RawValue,
    out: &mut TranslatedTools<'a>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<ChatToolChoice<'a>>, ConvertError> {
    if raw.get().starts_with('"') {
        let mode: Cow<'a, str> = serde_json::from_str(raw.get())
            .map_err(|e| ConvertError::from_parse_at("tool_choice", e))?;
        return match mode.as_ref() {
            "none" | "auto" | "required" => Ok(Some(ChatToolChoice::Mode(mode))),
            other => Err(ConvertError::invalid(
                "tool_choice",
                format!("unknown tool_choice '{other}' (expected none, auto or required)"),
            )),
        };
    }
    let object: ChoiceObject<'_> = serde_json::from_str(raw.get())
        .map_err(|e| ConvertError::from_parse_at("tool_choice", e))?;
    match object.kind.as_ref() {
        "function" | "custom" => {
            let name = object
                .function_name()
                .ok_or_else(|| ConvertError::MissingField("tool_choice.name".into()))?;
            let chat_name = out.names.chat_name(name, None).unwrap_or(name).to_owned();
            Ok(Some(named(chat_name)))
        }
        "allowed_tools" => {
            let mode = object.mode.as_deref().unwrap_or("auto");
            if !matches!(mode, "auto" | "required") {
                return Err(ConvertError::invalid(
                    "tool_choice.mode",
                    format!("unknown mode '{mode}' (expected auto or required)"),
                ));
            }
            let allowed: Vec<String> = object
                .tools
                .iter()
                .flatten()
                .filter_map(|t| t.function_name())
                .map(|name| out.names.chat_name(name, None).unwrap_or(name).to_owned())
                .collect();
            // Chat servers other than OpenAI's have no allowed-tools choice:
            // offering only the allowed tools has the same effect everywhere.
            out.tools
                .retain(|t| allowed.iter().any(|a| *a == t.function.name));
            Ok(Some(ChatToolChoice::Mode(Cow::Owned(mode.to_owned()))))
        }
        other => {
            losses.record(
                LossKind::HostedToolChoice,
                "tool_choice",
                format!("'{other}' names a hosted tool this backend cannot run; the model chooses freely"),
            )?;
            Ok(None)
        }
    }
}

fn named<'a>(name: String) -> ChatToolChoice<'a> {
    ChatToolChoice::Function {
        choice_type: "function",
        function: NamedFunction {
            name: Cow::Owned(name),
        },
    }
}
