//! Settings resolution, from each source and in order.

use super::*;

fn load(
    file: Option<&str>,
    flags: ServeFlags,
    env: &[(&str, &str)],
) -> Result<Config, ConfigError> {
    let dir = std::env::temp_dir().join(format!("wirebridge-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{:x}.toml",
        file.map(|f| f.len()).unwrap_or(0) ^ env.len()
    ));
    let mut flags = flags;
    if let Some(text) = file {
        std::fs::write(&path, text).unwrap();
        flags.config = Some(path);
    }
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::load(&flags, &|k| env.get(k).cloned())
}

#[test]
fn defaults() {
    let c = load(None, ServeFlags::default(), &[]).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8787");
    assert_eq!(c.upstream, Upstream::Demo);
    assert_eq!(c.upstream_api, UpstreamApi::Chat);
    assert_eq!(c.profile.name, "generic");
    assert_eq!(c.store, StoreSetting::Memory);
    let c = load(
        None,
        ServeFlags {
            store: Some("redis://127.0.0.1:6379/2".into()),
            ..Default::default()
        },
        &[],
    )
    .unwrap();
    assert_eq!(
        c.store,
        StoreSetting::Redis("redis://127.0.0.1:6379/2".into())
    );
    assert!(load(
        None,
        ServeFlags {
            store: Some("disk".into()),
            ..Default::default()
        },
        &[]
    )
    .is_err());
}

#[test]
fn flags_override_the_file_and_the_environment_overrides_both() {
    let file = "upstream = \"http://file:1/v1\"\nprofile = \"vllm\"\n";
    let flags = ServeFlags {
        profile: Some("ollama".into()),
        ..Default::default()
    };
    let c = load(Some(file), flags.clone(), &[]).unwrap();
    assert_eq!(c.profile.name, "ollama");
    assert_eq!(
        c.upstream,
        Upstream::Url("http://file:1/v1".parse().unwrap())
    );
    let c = load(Some(file), flags, &[("WIREBRIDGE_PROFILE", "deepseek")]).unwrap();
    assert_eq!(c.profile.name, "deepseek");
}

#[test]
fn custom_profiles_and_policy_from_the_file() {
    let file = "profile = \"mine\"\n[profiles.mine]\ndeveloper_role = true\nthink_tags = \"tags\"\n[loss_policy]\nhosted_tool = \"reject\"\n";
    let c = load(Some(file), ServeFlags::default(), &[]).unwrap();
    assert_eq!(c.profile.name, "mine");
    assert!(c.profile.developer_role);
    assert_eq!(
        c.policy.action(wirebridge_convert::LossKind::HostedTool),
        wirebridge_convert::LossAction::Reject
    );
}

#[test]
fn reasoning_output_and_seal_keys() {
    let key = SealKey::generate().to_base64();
    let old = SealKey::generate().to_base64();
    let file = format!(
        "reasoning_output = \"summary\"\nseal_key = \"{key}\"\nseal_previous_keys = [\"{old}\"]\n"
    );
    let c = load(Some(&file), ServeFlags::default(), &[]).unwrap();
    assert_eq!(c.reasoning_output, Some(ReasoningOutput::Summary));
    assert!(!c.seal.generated);
    assert_eq!(c.seal.current, key.parse().unwrap());
    assert_eq!(c.seal.previous, vec![old.parse::<SealKey>().unwrap()]);
    let flags = ServeFlags {
        reasoning_output: Some("text".into()),
        ..Default::default()
    };
    let c = load(
        Some(&file),
        flags,
        &[("WIREBRIDGE_REASONING_OUTPUT", "auto")],
    )
    .unwrap();
    assert_eq!(c.reasoning_output, Some(ReasoningOutput::Auto));

    let c = load(None, ServeFlags::default(), &[]).unwrap();
    assert!(c.seal.generated);
    assert_eq!(c.reasoning_output, None);

    let err = load(
        Some("\nseal_key = \"c2VjcmV0LWJ1dC1zaG9ydA==\"\n"),
        ServeFlags::default(),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("seal_key") && err.contains("line 2"), "{err}");
    assert!(
        !err.contains("c2VjcmV0"),
        "the key is never repeated: {err}"
    );
    let err = load(
        None,
        ServeFlags::default(),
        &[("WIREBRIDGE_SEAL_PREVIOUS_KEYS", "x,y")],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("seal_previous_keys"), "{err}");
    let err = load(
        Some("reasoning_output = \"loud\"\n"),
        ServeFlags::default(),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("reasoning_output") && err.contains("line 1"),
        "{err}"
    );
}

#[test]
fn errors_name_the_key_and_the_line() {
    let err = load(
        Some("listen = \"127.0.0.1:1\"\nlisen = 3\n"),
        ServeFlags::default(),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("lisen") && err.contains("line 2"), "{err}");
    let err = load(Some("\n\nprofile = \"nope\"\n"), ServeFlags::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'profile'") && err.contains("line 3") && err.contains("nope"),
        "{err}"
    );
    let err = load(
        Some("upstream_api = \"soap\"\n"),
        ServeFlags::default(),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("upstream_api") && err.contains("line 1"),
        "{err}"
    );
    let err = load(Some("upstream = \"ftp://x\"\n"), ServeFlags::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'upstream'") && err.contains("line 1"),
        "{err}"
    );
    let err = load(
        None,
        ServeFlags {
            upstream_api_key_env: Some("NOPE_KEY".into()),
            ..Default::default()
        },
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("NOPE_KEY"), "{err}");
}
