//! Codex's model catalog, as its models client reads it: `{"models":
//! [ModelInfo, …]}` (codex-rs `ModelsResponse`).
//!
//! Codex 0.169 refuses an entry that lacks any of `slug`, `display_name`,
//! `supported_reasoning_levels`, `shell_type`, `visibility`,
//! `supported_in_api`, `priority`, `base_instructions`, `support_verbosity`,
//! `truncation_policy` or `experimental_supported_tools`; earlier versions
//! also require `supports_reasoning_summaries` and
//! `supports_parallel_tool_calls`, which later ones ignore. Every field
//! written here is one of those, or one Codex reads to decide something:
//! `input_modalities` (images kept in user messages, or replaced by a
//! placeholder), `supported_reasoning_levels` and `default_reasoning_level`
//! (the efforts offered; a higher one asked for is sent as the highest
//! offered), `context_window` (when to compact), `use_responses_lite` and
//! `tool_mode` (code mode). Fields left out take Codex's own defaults.

use serde::Serialize;

use super::{CatalogModel, InputModality};

/// The catalog, serialized.
pub(super) fn write(models: &[CatalogModel]) -> Vec<u8> {
    let models = models
        .iter()
        .enumerate()
        .map(|(priority, model)| Entry::new(model, priority))
        .collect();
    serde_json::to_vec(&Catalog { models }).expect("the catalog always serializes")
}

#[derive(Serialize)]
struct Catalog<'a> {
    models: Vec<Entry<'a>>,
}

#[derive(Serialize)]
struct Entry<'a> {
    slug: &'a str,
    display_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_reasoning_level: Option<&'a str>,
    supported_reasoning_levels: Vec<Level<'a>>,
    /// Codex's own choice of shell tool.
    shell_type: &'static str,
    visibility: &'static str,
    supported_in_api: bool,
    /// Pickers list models by it, lowest first.
    priority: usize,
    upgrade: Option<()>,
    base_instructions: &'a str,
    supports_reasoning_summaries: bool,
    support_verbosity: bool,
    default_verbosity: Option<()>,
    apply_patch_tool_type: Option<()>,
    truncation_policy: Truncation,
    supports_parallel_tool_calls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_window: Option<u64>,
    experimental_supported_tools: [&'static str; 0],
    input_modalities: &'a [InputModality],
    use_responses_lite: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_mode: Option<&'static str>,
}

impl<'a> Entry<'a> {
    fn new(model: &'a CatalogModel, priority: usize) -> Self {
        Entry {
            slug: &model.id,
            display_name: &model.display_name,
            default_reasoning_level: model.default_reasoning_effort.as_deref(),
            supported_reasoning_levels: model
                .reasoning_efforts
                .iter()
                .map(|effort| Level {
                    effort,
                    description: describe(effort),
                })
                .collect(),
            shell_type: "default",
            visibility: "list",
            supported_in_api: true,
            priority,
            upgrade: None,
            base_instructions: &model.instructions,
            // Reasoning reaches Codex as a summary when it asks for one.
            supports_reasoning_summaries: true,
            // `verbosity` is a Responses field few backends read.
            support_verbosity: false,
            default_verbosity: None,
            // As for a model Codex does not know: no apply_patch tool of
            // the model's own.
            apply_patch_tool_type: None,
            truncation_policy: Truncation {
                mode: "bytes",
                limit: 10_000,
            },
            supports_parallel_tool_calls: !model.code_mode,
            context_window: model.context_window,
            experimental_supported_tools: [],
            input_modalities: &model.input_modalities,
            use_responses_lite: model.code_mode,
            tool_mode: model.code_mode.then_some("code_mode_only"),
        }
    }
}

#[derive(Serialize)]
struct Level<'a> {
    effort: &'a str,
    description: &'static str,
}

/// How much of a tool's output Codex keeps in the conversation.
#[derive(Serialize)]
struct Truncation {
    mode: &'static str,
    limit: u64,
}

/// What a picker shows beside an effort.
fn describe(effort: &str) -> &'static str {
    match effort {
        "none" => "No reasoning before answering",
        "minimal" => "The least reasoning, the quickest answers",
        "low" => "Light reasoning, quick answers",
        "medium" => "Reasoning balanced with speed",
        "high" => "Deeper reasoning for harder problems",
        "xhigh" => "Extra-deep reasoning for the hardest problems",
        "max" => "As much reasoning as the model does",
        _ => "Reasoning effort",
    }
}
