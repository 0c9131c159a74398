//! The model catalog: what clients are told about the upstream's models.
//!
//! Two shapes are written, from the upstream's own list
//! ([`parse_model_list`]) and the settings:
//!
//! - Codex's catalog ([`ModelCatalog::codex_catalog`]), which Codex reads
//!   to decide what it sends a model: images or a placeholder, which
//!   reasoning efforts, when to compact, whether it runs in code mode, and
//!   the instructions it starts every request with.
//! - OpenAI's plain list ([`ModelCatalog::openai_list`]), for an upstream
//!   that has no list of its own.
//!
//! What is said about a model comes, field by field, from the first source
//! that says it: the model's own settings, the settings of every model, what
//! the upstream's list says about it, and the catalog's defaults (input of
//! text and images, the efforts given to [`ModelCatalog::reasoning_efforts`],
//! no code mode, no instructions, no context window).
//!
//! ```
//! use wirebridge_convert::catalog::{parse_model_list, ModelCatalog, ModelSettings};
//!
//! let catalog = ModelCatalog::new()
//!     .reasoning_efforts(["low", "medium", "high"])
//!     .model("coder", ModelSettings { code_mode: Some(true), ..Default::default() });
//! let upstream = parse_model_list(br#"{"object":"list","data":[
//!     {"id":"coder","object":"model","max_model_len":32768}]}"#).unwrap();
//! let codex: serde_json::Value =
//!     serde_json::from_slice(&catalog.codex_catalog(Some(&upstream))).unwrap();
//! let coder = &codex["models"][0];
//! assert_eq!(coder["slug"], "coder");
//! assert_eq!(coder["context_window"], 32768);
//! assert_eq!(coder["use_responses_lite"], true);
//! assert_eq!(coder["default_reasoning_level"], "medium");
//! ```

mod codex;
mod settings;
mod upstream;

use std::collections::BTreeMap;

use serde::Serialize;

pub use settings::{InputModality, ModelSettings};
pub use upstream::{parse_model_list, UpstreamModel};

/// The settings a catalog is built from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelCatalog {
    /// Offered when no setting says which.
    efforts: Vec<String>,
    /// Settings of every model, under each model's own.
    defaults: ModelSettings,
    /// Each model's own settings, by name.
    models: BTreeMap<String, ModelSettings>,
}

/// One model as the catalog describes it, every field decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogModel {
    /// Its id, as requests name it.
    pub id: String,
    /// The name shown in pickers (the id, unless set).
    pub display_name: String,
    /// Its context window, when known.
    pub context_window: Option<u64>,
    /// What user messages may carry.
    pub input_modalities: Vec<InputModality>,
    /// The reasoning efforts offered, lowest first.
    pub reasoning_efforts: Vec<String>,
    /// The effort used when none is picked: the one set if offered, else
    /// `medium` if offered, else the middle one; none without efforts.
    pub default_reasoning_effort: Option<String>,
    /// Whether Codex runs it in code mode.
    pub code_mode: bool,
    /// The instructions Codex starts its requests with (empty: none).
    pub instructions: String,
}

impl ModelCatalog {
    /// A catalog with no settings: every model takes text and images, and
    /// is offered no reasoning effort.
    pub fn new() -> Self {
        Self::default()
    }

    /// The efforts offered to models whose settings name none (a backend
    /// profile's, when the backend takes an effort).
    pub fn reasoning_efforts<I, S>(mut self, efforts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.efforts = efforts.into_iter().map(Into::into).collect();
        self
    }

    /// Settings of every model, under each model's own.
    pub fn defaults(mut self, settings: ModelSettings) -> Self {
        self.defaults = settings;
        self
    }

    /// A model's own settings. A model set here is in Codex's catalog even
    /// when the upstream's list leaves it out.
    pub fn model(mut self, name: impl Into<String>, settings: ModelSettings) -> Self {
        self.models.insert(name.into(), settings);
        self
    }

    /// Whether any model has settings of its own.
    pub fn has_models(&self) -> bool {
        !self.models.is_empty()
    }

    /// The context window the catalog gives the model `id`: its own, else
    /// the one every model has (`[model_defaults]`).
    pub fn context_window(&self, id: &str) -> Option<u64> {
        self.models
            .get(id)
            .and_then(|own| own.context_window)
            .or(self.defaults.context_window)
    }

    /// Everything said about the model `id`, given what the upstream says
    /// about it (`hints`).
    pub fn resolve(&self, id: &str, hints: &ModelSettings) -> CatalogModel {
        let builtin = ModelSettings {
            input_modalities: Some(vec![InputModality::Text, InputModality::Image]),
            reasoning_efforts: Some(self.efforts.clone()),
            ..ModelSettings::default()
        };
        let own = self.models.get(id).cloned().unwrap_or_default();
        let merged = own.over(&self.defaults).over(hints).over(&builtin);
        let efforts = merged.reasoning_efforts.unwrap_or_default();
        let default_reasoning_effort = default_effort(&efforts, merged.default_reasoning_effort);
        CatalogModel {
            id: id.to_owned(),
            display_name: merged.display_name.unwrap_or_else(|| id.to_owned()),
            context_window: merged.context_window,
            input_modalities: merged.input_modalities.unwrap_or_default(),
            reasoning_efforts: efforts,
            default_reasoning_effort,
            code_mode: merged.code_mode.unwrap_or(false),
            instructions: merged.instructions.unwrap_or_default(),
        }
    }

    /// The catalog's models: the upstream's in its order, then those with
    /// settings of their own that it does not list (by name). Without an
    /// upstream list, the models with settings.
    pub fn models(&self, upstream: Option<&[UpstreamModel]>) -> Vec<CatalogModel> {
        let upstream = upstream.unwrap_or_default();
        let listed = upstream
            .iter()
            .map(|model| self.resolve(&model.id, &model.hints));
        let unlisted = self
            .models
            .keys()
            .filter(|name| !upstream.iter().any(|model| &model.id == *name))
            .map(|name| self.resolve(name, &ModelSettings::default()));
        listed.chain(unlisted).collect()
    }

    /// Codex's catalog, `{"models":[…]}`, of [`ModelCatalog::models`].
    pub fn codex_catalog(&self, upstream: Option<&[UpstreamModel]>) -> Vec<u8> {
        codex_catalog(&self.models(upstream))
    }

    /// OpenAI's plain list of the models with settings of their own,
    /// `created` at this Unix time: for an upstream with no list.
    pub fn openai_list(&self, created: u64) -> Vec<u8> {
        #[derive(Serialize)]
        struct List<'a> {
            object: &'static str,
            data: Vec<Model<'a>>,
        }
        #[derive(Serialize)]
        struct Model<'a> {
            id: &'a str,
            object: &'static str,
            created: u64,
            owned_by: &'static str,
        }
        let data = self
            .models
            .keys()
            .map(|id| Model {
                id,
                object: "model",
                created,
                owned_by: "wirebridge",
            })
            .collect();
        serde_json::to_vec(&List {
            object: "list",
            data,
        })
        .expect("the list always serializes")
    }
}

/// Codex's catalog of these models, `{"models":[…]}`, listed in this
/// order.
pub fn codex_catalog(models: &[CatalogModel]) -> Vec<u8> {
    codex::write(models)
}

/// The effort used when none is picked.
fn default_effort(efforts: &[String], set: Option<String>) -> Option<String> {
    if let Some(set) = set.filter(|set| efforts.contains(set)) {
        return Some(set);
    }
    if efforts.iter().any(|e| e == "medium") {
        return Some("medium".to_owned());
    }
    // The lower of two middles: an unknown backend is asked for less.
    efforts.get(efforts.len().saturating_sub(1) / 2).cloned()
}

#[cfg(test)]
mod tests;
