//! What can be said about one model, from any source: every field is
//! optional, and an unset one is left to the next source.

use serde::{Deserialize, Serialize};

/// What a client may send a model, as Codex names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputModality {
    /// Text, tool calls and their results.
    Text,
    /// Images attached to user messages (and returned by tools).
    Image,
}

impl InputModality {
    /// The name clients use.
    pub fn as_str(self) -> &'static str {
        match self {
            InputModality::Text => "text",
            InputModality::Image => "image",
        }
    }
}

impl std::str::FromStr for InputModality {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(InputModality::Text),
            "image" => Ok(InputModality::Image),
            other => Err(format!(
                "unknown input modality '{other}' (expected text or image)"
            )),
        }
    }
}

/// What is known about a model: from the settings, from the upstream's own
/// model list, or the catalog's defaults. Unset fields are taken from the
/// source under it ([`ModelSettings::over`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSettings {
    /// The name shown in model pickers.
    pub display_name: Option<String>,
    /// How many tokens the model reads at most, prompt and answer together.
    pub context_window: Option<u64>,
    /// What user messages may carry.
    pub input_modalities: Option<Vec<InputModality>>,
    /// The reasoning efforts offered (names from
    /// [`REASONING_EFFORTS`](crate::profile::REASONING_EFFORTS)), lowest
    /// first; empty when the model takes none.
    pub reasoning_efforts: Option<Vec<String>>,
    /// The effort a client uses when its user picked none.
    pub default_reasoning_effort: Option<String>,
    /// Whether Codex drives the model in code mode ("Responses Lite"): its
    /// tools arrive in an `additional_tools` item, and the model runs them
    /// through one JavaScript `exec` tool.
    pub code_mode: Option<bool>,
    /// The instructions Codex puts first in every request for the model,
    /// in place of its own.
    pub instructions: Option<String>,
}

impl ModelSettings {
    /// These settings, each unset field taken from `under`.
    pub fn over(self, under: &ModelSettings) -> ModelSettings {
        ModelSettings {
            display_name: self.display_name.or_else(|| under.display_name.clone()),
            context_window: self.context_window.or(under.context_window),
            input_modalities: self
                .input_modalities
                .or_else(|| under.input_modalities.clone()),
            reasoning_efforts: self
                .reasoning_efforts
                .or_else(|| under.reasoning_efforts.clone()),
            default_reasoning_effort: self
                .default_reasoning_effort
                .or_else(|| under.default_reasoning_effort.clone()),
            code_mode: self.code_mode.or(under.code_mode),
            instructions: self.instructions.or_else(|| under.instructions.clone()),
        }
    }
}
