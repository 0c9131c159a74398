//! Responses `tools` and `tool_choice` → Chat.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::{
    ChatTool, ChatToolChoice, FunctionDef, NamedFunction, UserLocation, WebSearchOptions,
};
use wirebridge_wire::raw::JsonText;
use wirebridge_wire::responses::lenient::{CreateResponse, InputItem, ItemKind, Tool};
use wirebridge_wire::{RawObject, Str};

use super::replayed_items::TOOL_SEARCH;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::profile::BackendProfile;
use crate::recorder::LossRecorder;
use crate::tool_names::{ToolKind, ToolNameMap, ToolOrigin};

pub(super) struct TranslatedTools<'a> {
    pub(super) tools: Vec<ChatTool<'a>>,
    pub(super) choice: Option<ChatToolChoice<'a>>,
    pub(super) web_search: Option<WebSearchOptions<'a>>,
    pub(super) names: ToolNameMap,
}

/// One list of tools the client declared, and where it is.
pub(super) struct ToolList<'a> {
    /// `tools`, or `input[3].tools`.
    pub(super) path: Cow<'static, str>,
    pub(super) tools: Vec<Tool<'a>>,
    /// Loaded by the client's tool search (a `tool_search_output` item):
    /// its deferred tools are offered.
    pub(super) loaded: bool,
}

/// Where a tool sits in the request (`tools[2]`, `input[3].tools[0]`,
/// `tools[1].tools[4]` inside a namespace): written out only when an error
/// or a loss names it, not for every tool of every turn.
#[derive(Clone, Copy)]
struct ToolPath<'p> {
    list: &'p str,
    index: usize,
    /// The tool's place in its namespace.
    inner: Option<usize>,
}

impl fmt::Display for ToolPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.list, self.index)?;
        match self.inner {
            Some(j) => write!(f, ".tools[{j}]"),
            None => Ok(()),
        }
    }
}

/// Every tool list of a request: `tools`, then those of `additional_tools`
/// items (code-mode clients declare their tools there) and of
/// `tool_search_output` items (tools a search loaded), in input order.
pub(super) fn tool_lists<'a>(
    request: &CreateResponse<'a>,
    items: &[InputItem<'a>],
) -> Result<Vec<ToolList<'a>>, ConvertError> {
    let mut lists = vec![ToolList {
        path: Cow::Borrowed("tools"),
        tools: request
            .parse_tools()
            .map_err(|e| ConvertError::from_parse_at("tools", e))?,
        loaded: false,
    }];
    for (i, item) in items.iter().enumerate() {
        let loaded = match item.classify() {
            ItemKind::AdditionalTools => false,
            ItemKind::ToolSearchOutput => true,
            _ => continue,
        };
        let path = format!("input[{i}].tools");
        let tools = match item.tools.filter(|t| t.get() != "null") {
            Some(raw) => serde_json::from_str(raw.get())
                .map_err(|e| ConvertError::from_parse_at(&path, e))?,
            None if loaded => Vec::new(),
            None => return Err(ConvertError::MissingField(path)),
        };
        lists.push(ToolList {
            path: Cow::Owned(path),
            tools,
            loaded,
        });
    }
    Ok(lists)
}

pub(super) fn translate_tools<'a>(
    lists: &[ToolList<'a>],
    tool_choice: Option<&'a RawValue>,
    profile: &BackendProfile,
    losses: &mut LossRecorder<'_>,
) -> Result<TranslatedTools<'a>, ConvertError> {
    let count = lists.iter().map(|l| l.tools.len()).sum();
    let mut out = TranslatedTools {
        tools: Vec::with_capacity(count),
        choice: None,
        web_search: None,
        names: ToolNameMap::default(),
    };
    // Deferred tools wait for the client's own tool search to load them;
    // without one, nothing would ever load them, so they are offered at once.
    let client_search = lists
        .iter()
        .flat_map(|l| &l.tools)
        .any(|t| t.kind() == "tool_search" && t.execution.as_deref() == Some("client"));
    for list in lists {
        let offer_deferred = list.loaded || !client_search;
        for (i, tool) in list.tools.iter().enumerate() {
            let path = ToolPath {
                list: &list.path,
                index: i,
                inner: None,
            };
            out.tool(tool, path, offer_deferred, profile, losses)?;
        }
    }
    if let Some(raw) = tool_choice.filter(|r| r.get() != "null") {
        out.choice = choice(raw, &mut out, profile, losses)?;
    }
    Ok(out)
}

impl<'a> TranslatedTools<'a> {
    fn tool(
        &mut self,
        tool: &Tool<'a>,
        path: ToolPath<'_>,
        offer_deferred: bool,
        profile: &BackendProfile,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        match tool.kind() {
            "function" | "custom" => self.function(tool, None, path, offer_deferred, losses),
            "namespace" => {
                let namespace = tool
                    .name
                    .as_deref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
                for (j, inner) in tool.tools.iter().flatten().enumerate() {
                    let inner_path = ToolPath {
                        inner: Some(j),
                        ..path
                    };
                    match inner.kind() {
                        "function" | "custom" => self.function(
                            inner,
                            Some(namespace),
                            inner_path,
                            offer_deferred,
                            losses,
                        )?,
                        other => losses.record(
                            LossKind::HostedTool,
                            inner_path.to_string(),
                            format!("'{other}' tools inside a namespace cannot be offered to a Chat backend"),
                        )?,
                    }
                }
                Ok(())
            }
            "tool_search" if tool.execution.as_deref() == Some("client") => {
                self.tool_search(tool);
                Ok(())
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
                self.web_search = Some(WebSearchOptions {
                    user_location: tool.user_location.and_then(chat_user_location),
                    search_context_size: tool.search_context_size.filter(|r| r.get() != "null"),
                });
                Ok(())
            }
            "" => Err(ConvertError::MissingField(format!("{path}.type"))),
            "tool_search" => losses.record(
                LossKind::HostedTool,
                path.to_string(),
                "a tool search run by the server cannot run on this backend; deferred tools are offered directly",
            ),
            other => losses.record(
                LossKind::HostedTool,
                path.to_string(),
                format!("'{other}' is a hosted tool this backend cannot run"),
            ),
        }
    }

    fn function(
        &mut self,
        tool: &Tool<'a>,
        namespace: Option<&str>,
        path: ToolPath<'_>,
        offer_deferred: bool,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let name = tool
            .name
            .as_deref()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
        if tool.defer_loading == Some(true) && !offer_deferred {
            return Ok(());
        }
        // A tool loaded again by a later search is offered once.
        if self.names.chat_name(name, namespace).is_some_and(|chat| {
            self.names
                .origin(chat)
                .is_none_or(|o| o.namespace.as_deref() == namespace)
        }) {
            return Ok(());
        }
        let def = function(tool, namespace, path, &mut self.names, losses)?;
        self.tools.push(def);
        Ok(())
    }

    /// The client's tool search, as a function the model can call; its
    /// calls come back as `tool_search_call` items.
    fn tool_search(&mut self, tool: &Tool<'a>) {
        if self.names.contains(TOOL_SEARCH) {
            return;
        }
        let chat_name = self.names.register(ToolOrigin {
            name: TOOL_SEARCH.to_owned(),
            namespace: None,
            kind: ToolKind::ToolSearch,
        });
        let parameters = tool
            .parameters
            .filter(|p| p.get() != "null")
            .map(Cow::Borrowed)
            .unwrap_or_else(|| {
                Cow::Owned(
                    RawValue::from_string(DEFAULT_SEARCH_PARAMETERS.to_owned())
                        .expect("a constant is valid JSON"),
                )
            });
        let description = tool
            .description
            .map(Into::into)
            .unwrap_or_else(|| JsonText::from_text(DEFAULT_SEARCH_DESCRIPTION));
        self.tools.push(ChatTool {
            kind: "function",
            function: FunctionDef {
                name: Cow::Owned(chat_name),
                description: Some(description),
                parameters: Some(parameters),
                strict: None,
            },
        });
    }
}

const DEFAULT_SEARCH_PARAMETERS: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What the tools you need do."},"limit":{"type":"number","description":"How many tools to load."}},"required":["query"],"additionalProperties":false}"#;

const DEFAULT_SEARCH_DESCRIPTION: &str =
    "Searches the tools that are not offered yet and loads the matching ones for the next call.";

/// A Responses location (`{type, city, country, region, timezone}`) in
/// Chat's nesting (`{type: "approximate", approximate: {city, …}}`).
fn chat_user_location(raw: &RawValue) -> Option<UserLocation<'_>> {
    let mut approximate = RawObject::parse(raw).ok()?;
    approximate.remove("type");
    Some(UserLocation {
        kind: "approximate",
        approximate,
    })
}

fn function<'a>(
    tool: &Tool<'a>,
    namespace: Option<&str>,
    path: ToolPath<'_>,
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
        kind: if custom {
            ToolKind::Custom
        } else {
            ToolKind::Function
        },
    });
    let chat_name = if chat_name == name {
        tool.name.clone().map(Str::into_cow).unwrap_or_default()
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
        kind: "function",
        function: def,
    })
}

/// The schema of the function a custom tool becomes: one string, `input`.
/// A grammar cannot be enforced by a Chat backend, so it is written into the
/// parameter's description for the model to follow.
fn custom_parameters(
    format: Option<&RawValue>,
    path: ToolPath<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Box<RawValue>, ConvertError> {
    #[derive(Deserialize, Default)]
    struct Format<'b> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Str<'b>>,
        #[serde(borrow, default)]
        syntax: Option<Str<'b>>,
        #[serde(borrow, default)]
        definition: Option<Str<'b>>,
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
    Ok(input_schema(&description))
}

/// The JSON Schema of `{"input": string}`, the input described.
fn input_schema(description: &str) -> Box<RawValue> {
    #[derive(Serialize)]
    struct Schema<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        properties: Properties<'a>,
        required: [&'static str; 1],
        #[serde(rename = "additionalProperties")]
        additional_properties: bool,
    }
    #[derive(Serialize)]
    struct Properties<'a> {
        input: Property<'a>,
    }
    #[derive(Serialize)]
    struct Property<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        description: &'a str,
    }
    let schema = Schema {
        kind: "object",
        properties: Properties {
            input: Property {
                kind: "string",
                description,
            },
        },
        required: ["input"],
        additional_properties: false,
    };
    serde_json::value::to_raw_value(&schema).expect("schemas always serialize")
}

#[derive(Deserialize)]
struct ChoiceObject<'b> {
    #[serde(rename = "type", borrow)]
    kind: Str<'b>,
    #[serde(borrow, default)]
    name: Option<Str<'b>>,
    #[serde(borrow, default)]
    mode: Option<Str<'b>>,
    #[serde(borrow, default)]
    tools: Option<Vec<ChoiceObject<'b>>>,
    #[serde(borrow, default)]
    function: Option<NamedChoice<'b>>,
}

#[derive(Deserialize)]
struct NamedChoice<'b> {
    #[serde(borrow)]
    name: Str<'b>,
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
    profile: &BackendProfile,
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
            if profile.named_tool_choice {
                return Ok(Some(named(chat_name)));
            }
            // Offering only the named tool and requiring a call forces the
            // same call on servers that read only the string forms.
            out.tools.retain(|t| t.function.name == chat_name);
            if out.tools.is_empty() {
                return Err(ConvertError::invalid(
                    "tool_choice.name",
                    format!("tool_choice names '{name}', which is not among the request's tools"),
                ));
            }
            Ok(Some(ChatToolChoice::Mode(Cow::Borrowed("required"))))
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
        kind: "function",
        function: NamedFunction {
            name: Cow::Owned(name),
        },
    }
}
