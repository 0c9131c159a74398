use serde_json::{json, Value};

use super::*;

fn efforts(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|s| s.to_string()).collect())
}

fn codex(catalog: &ModelCatalog, upstream: Option<&[UpstreamModel]>) -> Value {
    serde_json::from_slice(&catalog.codex_catalog(upstream)).unwrap()
}

#[test]
fn a_model_with_nothing_said_takes_the_catalog_defaults() {
    let catalog = ModelCatalog::new().reasoning_efforts(["low", "medium", "high"]);
    let model = catalog.resolve("qwen3-coder", &ModelSettings::default());
    assert_eq!(
        model,
        CatalogModel {
            id: "qwen3-coder".into(),
            display_name: "qwen3-coder".into(),
            context_window: None,
            input_modalities: vec![InputModality::Text, InputModality::Image],
            reasoning_efforts: efforts(&["low", "medium", "high"]).unwrap(),
            default_reasoning_effort: Some("medium".into()),
            code_mode: false,
            instructions: String::new(),
        }
    );
    let bare = ModelCatalog::new().resolve("m", &ModelSettings::default());
    assert!(bare.reasoning_efforts.is_empty());
    assert_eq!(bare.default_reasoning_effort, None);
}

#[test]
fn each_field_comes_from_the_first_source_that_says_it() {
    // Own settings, then every model's, then the upstream's list, then the
    // catalog's defaults.
    let catalog = ModelCatalog::new()
        .reasoning_efforts(["low", "medium", "high"])
        .defaults(ModelSettings {
            context_window: Some(65_536),
            code_mode: Some(true),
            instructions: Some("Be brief.".into()),
            ..ModelSettings::default()
        })
        .model(
            "vision",
            ModelSettings {
                display_name: Some("Vision".into()),
                reasoning_efforts: efforts(&["low", "high"]),
                code_mode: Some(false),
                ..ModelSettings::default()
            },
        );
    let hints = ModelSettings {
        context_window: Some(131_072),
        input_modalities: Some(vec![InputModality::Text]),
        ..ModelSettings::default()
    };
    let model = catalog.resolve("vision", &hints);
    assert_eq!(model.display_name, "Vision");
    assert_eq!(model.context_window, Some(65_536), "every model's setting");
    assert_eq!(
        model.input_modalities,
        [InputModality::Text],
        "the upstream's"
    );
    assert_eq!(model.reasoning_efforts, ["low", "high"], "its own");
    assert!(!model.code_mode, "its own, over every model's");
    assert_eq!(model.instructions, "Be brief.");

    let other = catalog.resolve("other", &hints);
    assert_eq!(other.display_name, "other");
    assert!(other.code_mode);
    assert_eq!(other.reasoning_efforts, ["low", "medium", "high"]);
}

#[test]
fn the_default_effort_is_the_one_set_if_offered_else_medium_else_the_middle() {
    let set = |offered: &[&str], set: Option<&str>| {
        ModelCatalog::new()
            .model(
                "m",
                ModelSettings {
                    reasoning_efforts: efforts(offered),
                    default_reasoning_effort: set.map(Into::into),
                    ..ModelSettings::default()
                },
            )
            .resolve("m", &ModelSettings::default())
            .default_reasoning_effort
    };
    assert_eq!(
        set(&["low", "medium", "high"], Some("high")).unwrap(),
        "high"
    );
    assert_eq!(
        set(&["low", "medium", "high"], Some("xhigh")).unwrap(),
        "medium"
    );
    assert_eq!(set(&["low", "medium", "high"], None).unwrap(), "medium");
    assert_eq!(set(&["low", "high"], None).unwrap(), "low");
    assert_eq!(set(&["minimal", "low", "high"], None).unwrap(), "low");
    assert_eq!(set(&["high"], None).unwrap(), "high");
    assert_eq!(set(&[], Some("low")), None);
}

#[test]
fn the_upstream_list_is_read_leniently_with_its_hints() {
    let list = br#"{"object":"list","data":[
        {"id":"Qwen/Qwen3-Coder","object":"model","max_model_len":32768,"permission":[{}]},
        {"id":"router/vision","context_length":200000,
         "architecture":{"input_modalities":["text","image","file"]}},
        {"id":"speech","input_modalities":["audio"],"context_window":"big"},
        {"object":"model"},
        {"id":7},
        {"id":"plain","context_length":0}
    ]}"#;
    let models = parse_model_list(list).unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["Qwen/Qwen3-Coder", "router/vision", "speech", "plain"]
    );
    assert_eq!(models[0].hints.context_window, Some(32_768));
    assert_eq!(models[0].hints.input_modalities, None);
    assert_eq!(models[1].hints.context_window, Some(200_000));
    assert_eq!(
        models[1].hints.input_modalities,
        Some(vec![InputModality::Text, InputModality::Image])
    );
    // Nothing Codex can name, and a context window that is not a number.
    assert_eq!(models[2].hints, ModelSettings::default());
    assert_eq!(models[3].hints, ModelSettings::default());

    for bad in [&b"not json"[..], br#"{"models":[]}"#, br#"{"data":{}}"#] {
        let error = parse_model_list(bad).unwrap_err();
        assert_eq!(error.status(), 502, "{error}");
    }
}

#[test]
fn the_catalog_lists_the_upstream_models_then_configured_ones_it_lacks() {
    let catalog = ModelCatalog::new()
        .model("zeta-alias", ModelSettings::default())
        .model("beta", ModelSettings::default())
        .model("alpha-alias", ModelSettings::default());
    let upstream = parse_model_list(br#"{"data":[{"id":"gamma"},{"id":"beta"}]}"#).unwrap();
    let ids = |models: Vec<CatalogModel>| models.into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(
        ids(catalog.models(Some(&upstream))),
        ["gamma", "beta", "alpha-alias", "zeta-alias"]
    );
    assert_eq!(
        ids(catalog.models(None)),
        ["alpha-alias", "beta", "zeta-alias"]
    );
    let priorities: Vec<Value> = codex(&catalog, Some(&upstream))["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["priority"].clone())
        .collect();
    assert_eq!(priorities, [json!(0), json!(1), json!(2), json!(3)]);
}

#[test]
fn a_codex_entry_has_every_field_codex_requires() {
    let catalog = ModelCatalog::new().reasoning_efforts(["low", "medium", "high"]);
    let upstream = parse_model_list(br#"{"data":[{"id":"m","max_model_len":8192}]}"#).unwrap();
    let entry = &codex(&catalog, Some(&upstream))["models"][0];
    // Codex 0.169 refuses an entry without these; older versions also
    // require the last two.
    for field in [
        "slug",
        "display_name",
        "supported_reasoning_levels",
        "shell_type",
        "visibility",
        "supported_in_api",
        "priority",
        "base_instructions",
        "support_verbosity",
        "truncation_policy",
        "experimental_supported_tools",
        "supports_reasoning_summaries",
        "supports_parallel_tool_calls",
    ] {
        assert!(entry.get(field).is_some(), "{field} missing: {entry}");
    }
    assert_eq!(entry["slug"], "m");
    assert_eq!(entry["shell_type"], "default");
    assert_eq!(entry["visibility"], "list");
    assert_eq!(entry["base_instructions"], "");
    assert_eq!(entry["context_window"], 8192);
    assert_eq!(entry["input_modalities"], json!(["text", "image"]));
    assert_eq!(
        entry["truncation_policy"],
        json!({"mode": "bytes", "limit": 10000})
    );
    assert_eq!(entry["default_reasoning_level"], "medium");
    let levels: Vec<&str> = entry["supported_reasoning_levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert!(!l["description"].as_str().unwrap().is_empty());
            l["effort"].as_str().unwrap()
        })
        .collect();
    assert_eq!(levels, ["low", "medium", "high"]);
    assert_eq!(entry["use_responses_lite"], false);
    assert!(entry.get("tool_mode").is_none());
}

#[test]
fn code_mode_text_only_and_effortless_models_say_so() {
    let catalog = ModelCatalog::new()
        .model(
            "coder",
            ModelSettings {
                code_mode: Some(true),
                instructions: Some("You write code.".into()),
                ..ModelSettings::default()
            },
        )
        .model(
            "reader",
            ModelSettings {
                input_modalities: Some(vec![InputModality::Text]),
                ..ModelSettings::default()
            },
        );
    let catalog = codex(&catalog, None);
    let coder = &catalog["models"][0];
    assert_eq!(coder["use_responses_lite"], true);
    assert_eq!(coder["tool_mode"], "code_mode_only");
    assert_eq!(coder["supports_parallel_tool_calls"], false);
    assert_eq!(coder["base_instructions"], "You write code.");
    assert_eq!(coder["supported_reasoning_levels"], json!([]));
    assert!(coder.get("default_reasoning_level").is_none());
    assert!(coder.get("context_window").is_none());
    let reader = &catalog["models"][1];
    assert_eq!(reader["input_modalities"], json!(["text"]));
}

#[test]
fn the_plain_list_names_the_configured_models() {
    let catalog = ModelCatalog::new()
        .model("b", ModelSettings::default())
        .model("a", ModelSettings::default());
    let list: Value = serde_json::from_slice(&catalog.openai_list(1_700_000_000)).unwrap();
    assert_eq!(
        list,
        json!({"object": "list", "data": [
            {"id": "a", "object": "model", "created": 1_700_000_000, "owned_by": "wirebridge"},
            {"id": "b", "object": "model", "created": 1_700_000_000, "owned_by": "wirebridge"},
        ]})
    );
    assert!(catalog.has_models());
    assert!(!ModelCatalog::new().has_models());
}
