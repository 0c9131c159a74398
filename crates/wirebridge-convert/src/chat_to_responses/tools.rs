//! Chat `tools`, `functions`, `tool_choice`, `function_call` and
//! `web_search_options` → Responses `tools` and `tool_choice`.

use std::borrow::Cow;

use wirebridge_wire::chat::lenient::{
    CreateChatCompletion, CustomFormat as ChatFormat, FunctionChoice, FunctionDef,
    ToolChoice as ChatChoice, ToolChoiceObject, WebSearchOptions,
};
use wirebridge_wire::responses::strict::{
    AllowedTools, CustomFormat, CustomTool, FunctionTool, Tool, ToolChoice, ToolRef, UserLocation,
    WebSearchTool,
};
use wirebridge_wire::Str;

use super::content::locate;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

pub(super) struct TranslatedTools<'a> {
    pub(super) tools: Vec<Tool<'a>>,
    pub(super) choice: Option<ToolChoice<'a>>,
}

pub(super) fn translate_tools<'a>(
    request: &CreateChatCompletion<'a>,
    losses: &mut LossRecorder<'_>,
) -> Result<TranslatedTools<'a>, ConvertError> {
    let chat_tools = request.tools.as_deref().unwrap_or_default();
    let legacy = request.functions.as_deref().unwrap_or_default();
    let mut tools = Vec::with_capacity(chat_tools.len() + legacy.len() + 1);
    for (i, tool) in chat_tools.iter().enumerate() {
        let path = format!("tools[{i}]");
        match tool.kind() {
            "function" => {
                let def = tool
                    .function
                    .as_ref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.function")))?;
                tools.push(Tool::Function(function(def, &format!("{path}.function"))?));
            }
            "custom" => {
                let def = tool
                    .custom
                    .as_ref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.custom")))?;
                let path = format!("{path}.custom");
                let name = def
                    .name
                    .clone()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
                let format = match &def.format {
                    Some(format) => Some(custom_format(format, &format!("{path}.format"))?),
                    None => None,
                };
                tools.push(Tool::Custom(CustomTool {
                    name: name.into(),
                    description: def.description.map(Into::into),
                    format,
                }));
            }
            "" => return Err(ConvertError::MissingField(format!("{path}.type"))),
            other => losses.record(
                LossKind::UnsupportedParameter,
                path,
                format!(
                    "'{other}' tools are not Chat Completions tools (expected function or custom)"
                ),
            )?,
        }
    }
    for (i, def) in legacy.iter().enumerate() {
        tools.push(Tool::Function(function(def, &format!("functions[{i}]"))?));
    }
    if let Some(options) = &request.web_search_options {
        tools.push(Tool::WebSearch(web_search(options)));
    }

    let choice = match request.tool_choice {
        Some(raw) => match ChatChoice::from_raw(raw)
            .map_err(|e| locate::<ToolChoiceObject<'_>>(raw, "tool_choice", e))?
        {
            Some(choice) => Some(tool_choice(choice)?),
            None => None,
        },
        None => None,
    };
    let choice = match (choice, request.function_call) {
        (Some(choice), _) => Some(choice),
        (None, Some(raw)) => match FunctionChoice::from_raw(raw)
            .map_err(|e| ConvertError::from_parse_at("function_call", e))?
        {
            Some(FunctionChoice::Mode(mode)) => Some(mode_choice(mode.into(), "function_call")?),
            Some(FunctionChoice::Named(named)) => Some(ToolChoice::Tool(ToolRef::Function {
                name: named
                    .name
                    .ok_or_else(|| ConvertError::MissingField("function_call.name".into()))?
                    .into(),
            })),
            None => None,
        },
        (None, None) => None,
    };
    Ok(TranslatedTools { tools, choice })
}

/// A function definition as a flat function tool.
fn function<'a>(def: &FunctionDef<'a>, path: &str) -> Result<FunctionTool<'a>, ConvertError> {
    let name = def
        .name
        .clone()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
    Ok(FunctionTool {
        name: name.into(),
        description: def.description.map(Into::into),
        parameters: def.parameters.filter(|p| p.get() != "null"),
        // Chat functions are non-strict unless asked; Responses makes an
        // unmarked function strict, so Chat's default is written out.
        strict: Some(def.strict.unwrap_or(false)),
    })
}

/// Chat nests a grammar under `grammar`; Responses has it flat.
fn custom_format<'a>(
    format: &ChatFormat<'a>,
    path: &str,
) -> Result<CustomFormat<'a>, ConvertError> {
    match format.kind.as_deref() {
        Some("text") => Ok(CustomFormat::Text),
        Some("grammar") => {
            let grammar = format.grammar.as_ref();
            let definition = grammar
                .and_then(|g| g.definition)
                .or(format.definition)
                .ok_or_else(|| ConvertError::MissingField(format!("{path}.grammar.definition")))?;
            let syntax = grammar
                .and_then(|g| g.syntax.clone())
                .or_else(|| format.syntax.clone())
                .ok_or_else(|| ConvertError::MissingField(format!("{path}.grammar.syntax")))?;
            Ok(CustomFormat::Grammar {
                syntax: syntax.into(),
                definition: definition.into(),
            })
        }
        Some(other) => Err(ConvertError::invalid(
            format!("{path}.type"),
            format!("unknown custom tool format '{other}' (expected text or grammar)"),
        )),
        None => Err(ConvertError::MissingField(format!("{path}.type"))),
    }
}

/// `web_search_options` as a `web_search` tool. Chat nests the location
/// under `approximate`; Responses has it flat.
fn web_search<'a>(options: &WebSearchOptions<'a>) -> WebSearchTool<'a> {
    let user_location = options
        .user_location
        .as_ref()
        .and_then(|l| l.approximate.as_ref())
        .map(|a| UserLocation {
            kind: "approximate",
            country: a.country.map(Into::into),
            region: a.region.map(Into::into),
            city: a.city.map(Into::into),
            timezone: a.timezone.map(Into::into),
        });
    WebSearchTool {
        user_location,
        search_context_size: options.search_context_size.clone().map(Str::into_cow),
    }
}

fn mode_choice<'a>(mode: Cow<'a, str>, param: &str) -> Result<ToolChoice<'a>, ConvertError> {
    match mode.as_ref() {
        "none" | "auto" | "required" => Ok(ToolChoice::Mode(mode)),
        other => Err(ConvertError::invalid(
            param,
            format!("unknown {param} '{other}' (expected none, auto or required)"),
        )),
    }
}

fn tool_choice(choice: ChatChoice<'_>) -> Result<ToolChoice<'_>, ConvertError> {
    let object = match choice {
        ChatChoice::Mode(mode) => return mode_choice(mode.into(), "tool_choice"),
        ChatChoice::Object(object) => object,
    };
    match object.kind() {
        "allowed_tools" => {
            let allowed = object
                .allowed_tools
                .ok_or_else(|| ConvertError::MissingField("tool_choice.allowed_tools".into()))?;
            let mode = allowed.mode.unwrap_or(Str::from("auto"));
            if !matches!(mode.as_ref(), "auto" | "required") {
                return Err(ConvertError::invalid(
                    "tool_choice.allowed_tools.mode",
                    format!("unknown mode '{mode}' (expected auto or required)"),
                ));
            }
            let tools = allowed
                .tools
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(k, tool)| tool_ref(tool, &format!("tool_choice.allowed_tools.tools[{k}]")))
                .collect::<Result<_, _>>()?;
            Ok(ToolChoice::Allowed(AllowedTools {
                kind: "allowed_tools",
                mode: mode.into(),
                tools,
            }))
        }
        "function" | "custom" => Ok(ToolChoice::Tool(tool_ref(object, "tool_choice")?)),
        "" => Err(ConvertError::MissingField("tool_choice.type".into())),
        other => Err(ConvertError::invalid(
            "tool_choice.type",
            format!(
                "unknown tool_choice type '{other}' (expected function, custom or allowed_tools)"
            ),
        )),
    }
}

/// `{type: function, function: {name}}` or `{type: custom, custom: {name}}`.
fn tool_ref<'a>(object: ToolChoiceObject<'a>, path: &str) -> Result<ToolRef<'a>, ConvertError> {
    let (kind, named) = match object.kind() {
        "function" => ("function", object.function),
        "custom" => ("custom", object.custom),
        "" => return Err(ConvertError::MissingField(format!("{path}.type"))),
        other => {
            return Err(ConvertError::invalid(
                format!("{path}.type"),
                format!("unknown tool type '{other}' (expected function or custom)"),
            ))
        }
    };
    let name = named
        .and_then(|n| n.name)
        .or(object.name)
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.{kind}.name")))?;
    Ok(match kind {
        "function" => ToolRef::Function { name: name.into() },
        _ => ToolRef::Custom { name: name.into() },
    })
}
