//! The upstream's own model list (`GET …/models`, OpenAI's shape), read
//! leniently: the ids, and what some servers say about each model beside
//! them.

use serde_json::Value;

use super::settings::{InputModality, ModelSettings};
use crate::ConvertError;

/// One model of the upstream's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamModel {
    /// Its id, as requests name it.
    pub id: String,
    /// What the upstream says about it: its context window (`context_length`
    /// on OpenRouter, `max_model_len` on vLLM and SGLang, or
    /// `context_window`) and its input modalities (`input_modalities`, or
    /// OpenRouter's `architecture.input_modalities`).
    pub hints: ModelSettings,
}

/// Reads `{"object":"list","data":[{"id":…},…]}`. Entries without a string
/// `id` are skipped; fields other than those read are ignored, whatever
/// their type.
pub fn parse_model_list(body: &[u8]) -> Result<Vec<UpstreamModel>, ConvertError> {
    let list: Value = serde_json::from_slice(body)
        .map_err(|e| ConvertError::InvalidUpstream(format!("the model list is not JSON: {e}")))?;
    let Some(data) = list.get("data").and_then(Value::as_array) else {
        return Err(ConvertError::InvalidUpstream(
            "the model list has no 'data' array".into(),
        ));
    };
    Ok(data.iter().filter_map(model).collect())
}

fn model(entry: &Value) -> Option<UpstreamModel> {
    let id = entry.get("id")?.as_str()?.to_owned();
    let context_window = ["context_window", "context_length", "max_model_len"]
        .iter()
        .find_map(|key| entry.get(key)?.as_u64().filter(|n| *n > 0));
    let modalities = entry
        .get("input_modalities")
        .or_else(|| entry.get("architecture")?.get("input_modalities"))
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str()?.parse::<InputModality>().ok())
                .collect::<Vec<_>>()
        })
        // A list naming only modalities Codex has no name for (audio, say)
        // says nothing about text and images.
        .filter(|known| !known.is_empty());
    Some(UpstreamModel {
        id,
        hints: ModelSettings {
            context_window,
            input_modalities: modalities,
            ..ModelSettings::default()
        },
    })
}
