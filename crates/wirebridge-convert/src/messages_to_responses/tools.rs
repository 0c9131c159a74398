//! Messages `tools` and `tool_choice` → Responses `tools`, `tool_choice`
//! and `parallel_tool_calls`.

use std::borrow::Cow;

use wirebridge_wire::messages::lenient::{CreateMessage, Tool as MessagesTool};
use wirebridge_wire::responses::strict::{FunctionTool, Tool, ToolChoice, ToolRef};

use super::path::Path;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

pub(super) struct TranslatedTools<'a> {
    pub(super) tools: Vec<Tool<'a>>,
    pub(super) choice: Option<ToolChoice<'a>>,
    pub(super) parallel: Option<bool>,
    /// The names of the client's own tools.
    pub(super) declared: Vec<String>,
}

/// Tool types Anthropic's servers run themselves.
const SERVER_TOOLS: [&str; 5] = [
    "web_search_",
    "web_fetch_",
    "code_execution_",
    "tool_search_tool_",
    "mcp_toolset",
];

pub(super) fn translate_tools<'a>(
    request: &CreateMessage<'a>,
    losses: &mut LossRecorder<'_>,
) -> Result<TranslatedTools<'a>, ConvertError> {
    let given = request.tools.as_deref().unwrap_or_default();
    let mut tools = Vec::with_capacity(given.len());
    let mut declared = Vec::with_capacity(given.len());
    let mut hosted: Vec<&str> = Vec::new();
    let root = Path::root("tools");
    for (i, tool) in given.iter().enumerate() {
        let path = root.index(i);
        match tool.kind() {
            "custom" => {
                if tool.defer_loading == Some(true) {
                    // Anthropic keeps a deferred tool out of the prompt
                    // until its tool search finds it; that search is a
                    // server tool no backend here runs, so the tool is
                    // offered from the start rather than never.
                    losses.record(
                        LossKind::UnsupportedParameter,
                        format!("{path}.defer_loading"),
                        "the backend has no tool search to load a deferred tool from; it is offered with the others on every turn",
                    )?;
                }
                let function = function(tool, path)?;
                declared.push(function.name.clone().into_owned());
                tools.push(Tool::Function(function));
            }
            "" => return Err(ConvertError::MissingField(format!("{path}.type"))),
            kind => {
                let runs_on_server = SERVER_TOOLS.iter().any(|p| kind.starts_with(p));
                let reason = if runs_on_server {
                    format!("'{kind}' is a server tool that Anthropic's API runs itself; this backend cannot run it")
                } else {
                    format!("'{kind}' is a tool whose schema is built into Claude; the backend's model does not know it")
                };
                losses.record(LossKind::HostedTool, path.to_string(), reason)?;
                hosted.extend(tool.name.as_deref());
            }
        }
    }

    let (choice, parallel) = match &request.tool_choice {
        None => (None, None),
        Some(choice) => {
            let parallel = choice.disable_parallel_tool_use.map(|disable| !disable);
            let mode = |m: &'static str| Some(ToolChoice::Mode(Cow::Borrowed(m)));
            let choice = match choice.kind.as_deref() {
                Some("auto") => mode("auto"),
                Some("any") => mode("required"),
                Some("none") => mode("none"),
                Some("tool") => {
                    let name = choice
                        .name
                        .clone()
                        .ok_or_else(|| ConvertError::MissingField("tool_choice.name".into()))?;
                    if hosted.contains(&name.as_ref()) {
                        losses.record(
                            LossKind::HostedToolChoice,
                            "tool_choice.name",
                            format!("'{name}' is a tool this backend does not have; the model chooses among the others"),
                        )?;
                        mode("auto")
                    } else {
                        Some(ToolChoice::Tool(ToolRef::Function {
                            name: name.into_cow(),
                        }))
                    }
                }
                Some(other) => {
                    return Err(ConvertError::invalid(
                        "tool_choice.type",
                        format!(
                            "unknown tool_choice type '{other}' (expected auto, any, tool or none)"
                        ),
                    ))
                }
                None => return Err(ConvertError::MissingField("tool_choice.type".into())),
            };
            (choice, parallel)
        }
    };
    Ok(TranslatedTools {
        tools,
        choice,
        parallel,
        declared,
    })
}

/// A custom tool as a function tool: `input_schema` is the `parameters`.
fn function<'a>(tool: &MessagesTool<'a>, path: Path<'_>) -> Result<FunctionTool<'a>, ConvertError> {
    let name = tool
        .name
        .clone()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
    let parameters = tool
        .input_schema
        .filter(|s| s.get() != "null")
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.input_schema")))?;
    Ok(FunctionTool {
        name: name.into_cow(),
        description: tool.description.map(Into::into),
        parameters: Some(parameters),
        // Anthropic tools follow their schema loosely unless `strict`;
        // Responses makes an unmarked function strict, so the default is
        // written out.
        strict: Some(tool.strict.unwrap_or(false)),
    })
}
