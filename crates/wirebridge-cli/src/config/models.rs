//! The model catalog's settings: `[models."NAME"]`, each model's own, and
//! `[model_defaults]`, under them for every model; the efforts offered
//! otherwise are the backend profile's.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use wirebridge_convert::catalog::{InputModality, ModelCatalog, ModelSettings};
use wirebridge_convert::profile::REASONING_EFFORTS;
use wirebridge_convert::BackendProfile;

use super::{value, ConfigError, FileConfig, Origin, UpstreamApi};

/// A `[models."NAME"]` or `[model_defaults]` table, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelTable {
    display_name: Option<Spanned<String>>,
    context_window: Option<Spanned<i64>>,
    input_modalities: Option<Spanned<Vec<String>>>,
    reasoning_efforts: Option<Spanned<Vec<String>>>,
    default_reasoning_effort: Option<Spanned<String>>,
    code_mode: Option<bool>,
    instructions_file: Option<Spanned<String>>,
}

/// The catalog the settings describe.
pub(super) fn load(
    file: &FileConfig,
    profile: &BackendProfile,
    upstream_api: UpstreamApi,
    origin: &Origin<'_>,
) -> Result<ModelCatalog, ConfigError> {
    let offered = profile_efforts(profile, upstream_api);
    let defaults = match &file.model_defaults {
        Some(table) => {
            if let Some(name) = &table.display_name {
                return Err(value(
                    "model_defaults.display_name",
                    &origin.at(name.span()),
                    "a display name belongs to one model: set it in its [models.\"NAME\"] table",
                ));
            }
            settings(table, "model_defaults", &offered, origin)?
        }
        None => ModelSettings::default(),
    };
    let under = defaults
        .reasoning_efforts
        .clone()
        .unwrap_or(offered.clone());
    let mut catalog = ModelCatalog::new().reasoning_efforts(offered);
    for (name, table) in &file.models {
        let own = settings(table, &format!("models.\"{name}\""), &under, origin)?;
        catalog = catalog.model(name, own);
    }
    Ok(catalog.defaults(defaults))
}

/// The efforts offered where no setting names any: the profile's, when
/// they reach the backend. A Responses upstream takes `reasoning.effort`
/// as it is; a Chat one only with the profile's `reasoning_effort`.
fn profile_efforts(profile: &BackendProfile, upstream_api: UpstreamApi) -> Vec<String> {
    match (upstream_api, profile.reasoning_effort) {
        (UpstreamApi::Chat, false) => Vec::new(),
        _ => profile.reasoning_efforts.clone(),
    }
}

/// One table's settings; `under` are the efforts it offers when it names
/// none, which a default effort must be one of.
fn settings(
    table: &ModelTable,
    key: &str,
    under: &[String],
    origin: &Origin<'_>,
) -> Result<ModelSettings, ConfigError> {
    let field = |name: &str| format!("{key}.{name}");
    let context_window = table
        .context_window
        .as_ref()
        .map(|tokens| match u64::try_from(*tokens.get_ref()) {
            Ok(tokens) if tokens > 0 => Ok(tokens),
            _ => Err(value(
                &field("context_window"),
                &origin.at(tokens.span()),
                "must be a positive number of tokens",
            )),
        })
        .transpose()?;
    let input_modalities = table
        .input_modalities
        .as_ref()
        .map(|names| {
            let at = origin.at(names.span());
            let modalities = names
                .get_ref()
                .iter()
                .map(|name| name.parse::<InputModality>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| value(&field("input_modalities"), &at, m))?;
            if !modalities.contains(&InputModality::Text) {
                return Err(value(&field("input_modalities"), &at, "must include text"));
            }
            Ok(modalities)
        })
        .transpose()?;
    let reasoning_efforts = table
        .reasoning_efforts
        .as_ref()
        .map(|names| efforts(names, &field("reasoning_efforts"), origin))
        .transpose()?;
    let default_reasoning_effort = match &table.default_reasoning_effort {
        Some(effort) => {
            let offered = reasoning_efforts.as_deref().unwrap_or(under);
            if !offered.contains(effort.get_ref()) {
                return Err(value(
                    &field("default_reasoning_effort"),
                    &origin.at(effort.span()),
                    format!(
                        "'{}' is not one of the efforts offered ({})",
                        effort.get_ref(),
                        listed(offered)
                    ),
                ));
            }
            Some(effort.get_ref().clone())
        }
        None => None,
    };
    let instructions = table
        .instructions_file
        .as_ref()
        .map(|path| {
            let full = beside(origin.file, path.get_ref());
            std::fs::read_to_string(&full).map_err(|e| {
                value(
                    &field("instructions_file"),
                    &origin.at(path.span()),
                    format!("cannot read {}: {e}", full.display()),
                )
            })
        })
        .transpose()?;
    Ok(ModelSettings {
        display_name: table.display_name.as_ref().map(|n| n.get_ref().clone()),
        context_window,
        input_modalities,
        reasoning_efforts,
        default_reasoning_effort,
        code_mode: table.code_mode,
        instructions,
    })
}

/// Efforts the bridge knows, lowest first, each once.
fn efforts(
    names: &Spanned<Vec<String>>,
    key: &str,
    origin: &Origin<'_>,
) -> Result<Vec<String>, ConfigError> {
    if let Some(unknown) = names
        .get_ref()
        .iter()
        .find(|name| !REASONING_EFFORTS.contains(&name.as_str()))
    {
        return Err(value(
            key,
            &origin.at(names.span()),
            format!(
                "unknown reasoning effort '{unknown}' (known: {})",
                REASONING_EFFORTS.join(", ")
            ),
        ));
    }
    Ok(REASONING_EFFORTS
        .iter()
        .filter(|known| names.get_ref().iter().any(|name| name == *known))
        .map(|known| known.to_string())
        .collect())
}

fn listed(efforts: &[String]) -> String {
    match efforts.is_empty() {
        true => "none".to_owned(),
        false => efforts.join(", "),
    }
}

/// A path as written in the settings file: relative ones are read from
/// the file's directory.
fn beside(settings_file: Option<&Path>, path: &str) -> PathBuf {
    let path = Path::new(path);
    match settings_file.and_then(Path::parent) {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use wirebridge_convert::catalog::CatalogModel;

    use super::*;
    use crate::config::{Config, ServeFlags};

    /// The settings of `file` (written to its own directory, beside
    /// `prompt.md`), with these flags.
    fn load(file: &str, flags: &[(&str, &str)]) -> Result<Config, ConfigError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("wirebridge-models-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("prompt.md"), "You write code.\n").unwrap();
        let path = dir.join("bridge.toml");
        std::fs::write(&path, file).unwrap();
        let mut args = vec!["--config", path.to_str().unwrap()];
        for (key, value) in flags {
            args.extend([key, value]);
        }
        let serve = ServeFlags::parse(&args);
        Config::load(&serve, &|_| None)
    }

    fn model(config: &Config, name: &str) -> CatalogModel {
        config.catalog.resolve(name, &ModelSettings::default())
    }

    fn error(file: &str) -> String {
        load(file, &[]).unwrap_err().to_string()
    }

    #[test]
    fn efforts_are_the_profiles_where_they_reach_the_backend() {
        // The generic profile drops `reasoning.effort` on a Chat backend:
        // Codex is offered none.
        let generic = load("", &[]).unwrap();
        assert!(model(&generic, "m").reasoning_efforts.is_empty());
        let vllm = load("", &[("--profile", "vllm")]).unwrap();
        assert_eq!(
            model(&vllm, "m").reasoning_efforts,
            ["low", "medium", "high"]
        );
        let openai = load("", &[("--profile", "openai")]).unwrap();
        assert_eq!(
            model(&openai, "m").reasoning_efforts,
            ["none", "minimal", "low", "medium", "high", "xhigh"]
        );
        // A Responses upstream reads the effort itself.
        let responses = load("", &[("--upstream-api", "responses")]).unwrap();
        assert_eq!(
            model(&responses, "m").reasoning_efforts,
            ["low", "medium", "high"]
        );
        assert!(!generic.catalog.has_models());
    }

    #[test]
    fn model_tables_over_the_defaults_table() {
        let config = load(
            r#"
profile = "vllm"

[model_defaults]
context_window = 32768
instructions_file = "prompt.md"

[models."qwen3-coder"]
display_name = "Qwen3 Coder"
code_mode = true
reasoning_efforts = ["high", "low", "high"]
default_reasoning_effort = "high"

[models."qwen3-vl"]
context_window = 131072
input_modalities = ["text", "image"]

[models."reader"]
input_modalities = ["text"]
"#,
            &[],
        )
        .unwrap();
        assert!(config.catalog.has_models());
        let coder = model(&config, "qwen3-coder");
        assert_eq!(coder.display_name, "Qwen3 Coder");
        assert!(coder.code_mode);
        // Known efforts, lowest first, each once.
        assert_eq!(coder.reasoning_efforts, ["low", "high"]);
        assert_eq!(coder.default_reasoning_effort.as_deref(), Some("high"));
        assert_eq!(coder.context_window, Some(32_768));
        assert_eq!(coder.instructions, "You write code.\n");
        let vl = model(&config, "qwen3-vl");
        assert_eq!(vl.context_window, Some(131_072));
        assert_eq!(vl.reasoning_efforts, ["low", "medium", "high"]);
        assert_eq!(
            vl.input_modalities,
            [InputModality::Text, InputModality::Image]
        );
        assert_eq!(
            model(&config, "reader").input_modalities,
            [InputModality::Text]
        );
        // A model without a table of its own takes the defaults table.
        let other = model(&config, "other");
        assert_eq!(other.context_window, Some(32_768));
        assert!(!other.code_mode);
    }

    #[test]
    fn a_wrong_model_setting_is_named_with_its_line() {
        let cases = [
            (
                "[models.m]\nreasoning_efforts = [\"low\", \"turbo\"]\n",
                "models.\"m\".reasoning_efforts",
                "unknown reasoning effort 'turbo'",
            ),
            (
                "\n[models.m]\ncontext_window = 0\n",
                "models.\"m\".context_window",
                "positive",
            ),
            (
                "[models.m]\ninput_modalities = [\"image\"]\n",
                "models.\"m\".input_modalities",
                "must include text",
            ),
            (
                "[models.m]\ninput_modalities = [\"text\", \"audio\"]\n",
                "models.\"m\".input_modalities",
                "unknown input modality 'audio'",
            ),
            (
                // The generic profile offers no effort on a Chat backend.
                "[models.m]\ndefault_reasoning_effort = \"low\"\n",
                "models.\"m\".default_reasoning_effort",
                "offered (none)",
            ),
            (
                "[model_defaults]\nreasoning_efforts = [\"low\"]\n[models.m]\ndefault_reasoning_effort = \"high\"\n",
                "models.\"m\".default_reasoning_effort",
                "offered (low)",
            ),
            (
                "[model_defaults]\ndisplay_name = \"All\"\n",
                "model_defaults.display_name",
                "belongs to one model",
            ),
            (
                "[models.m]\ninstructions_file = \"missing.md\"\n",
                "models.\"m\".instructions_file",
                "missing.md",
            ),
        ];
        for (file, key, message) in cases {
            let text = error(file);
            assert!(text.contains(key), "{file}: {text}");
            assert!(text.contains(message), "{file}: {text}");
            assert!(text.contains("bridge.toml line"), "{file}: {text}");
        }
        let text = error("[models.m]\ncontext = 8192\n");
        assert!(text.contains("unknown field `context`"), "{text}");
    }
}
