//! Settings resolution: what each setting takes and refuses.

mod replicas;
mod sources;

use super::*;
use wirebridge_convert::seal::SealKey;
use wirebridge_tower::MissingHistory;

/// The settings of `file`, `serve FLAGS` and `env`.
pub(super) fn load(
    file: Option<&str>,
    flags: &[&str],
    env: &[(&str, &str)],
) -> Result<Config, ConfigError> {
    let path = file.map(settings_file);
    let mut args = flags.to_vec();
    if let Some(path) = &path {
        args.extend(["--config", path.to_str().unwrap()]);
    }
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::load(&ServeFlags::parse(&args), &|k| env.get(k).cloned())
}

/// A settings file of its own (tests run in parallel) holding `text`.
pub(super) fn settings_file(text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebridge-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{n}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn defaults() {
    let c = load(None, &[], &[]).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8787");
    assert_eq!(c.upstream, Upstream::Demo);
    assert_eq!(c.upstream_api, UpstreamApi::Chat);
    assert_eq!(c.profile.name, "generic");
    assert_eq!(c.store, StoreSetting::Memory);
    assert_eq!(c.log_format, LogFormat::Pretty);
    assert_eq!(c.shutdown_grace_secs, 10);
    assert_eq!(c.upstream_key, None);
    assert_eq!(
        c.exchange,
        ExchangeLimits {
            first_byte_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(15),
            max_reply_size: 64 << 20,
            websocket: true,
            websocket_idle_timeout: Duration::from_secs(600),
            websocket_max_per_tenant: 32,
            websocket_max_memory: 512 << 20,
            websocket_max_age: Duration::from_secs(3600),
        }
    );
    assert!(!c.state.anonymous_store);
    assert!(!c.state.trust_credentials);
    assert_eq!(c.state.missing_history, MissingHistory::Refuse);
    assert_eq!(
        c.metrics,
        MetricsSettings {
            listen: None,
            max_models: 32
        }
    );
    // Defaults other crates keep too are written out in the declaration:
    // the two agree.
    assert_eq!(c.max_body, wirebridge_tower::DEFAULT_BODY_LIMIT);
    assert_eq!(
        c.exchange.max_reply_size,
        wirebridge_tower::DEFAULT_MAX_REPLY_SIZE
    );
    type Memory = wirebridge_store::MemoryStore;
    assert_eq!(
        c.state.tenant_max_entries,
        Memory::DEFAULT_MAX_ENTRIES_PER_TENANT
    );
    assert_eq!(
        c.state.tenant_max_bytes,
        Memory::DEFAULT_MAX_BYTES_PER_TENANT
    );
    assert_eq!(c.state.max_tenants, Memory::DEFAULT_MAX_TENANTS);
    assert_eq!(
        c.state.translated_history_bytes,
        wirebridge_convert::responses_to_chat::HistoryCache::DEFAULT_MAX_BYTES
    );
    type WebSocket = wirebridge_tower::WebSocketSettings;
    assert_eq!(
        c.exchange.websocket_idle_timeout,
        WebSocket::DEFAULT_IDLE_TIMEOUT
    );
    assert_eq!(
        c.exchange.websocket_max_per_tenant,
        WebSocket::DEFAULT_MAX_PER_TENANT
    );
    assert_eq!(c.exchange.websocket_max_age, WebSocket::DEFAULT_MAX_AGE);
    assert_eq!(
        c.exchange.websocket_max_memory,
        WebSocket::DEFAULT_MAX_MEMORY
    );
    let c = load(None, &["--store", "redis://127.0.0.1:6379/2"], &[]).unwrap();
    assert_eq!(
        c.store,
        StoreSetting::Redis(RedisSetting {
            url: "redis://127.0.0.1:6379/2".into(),
            tls: false,
            ca_file: None,
            client_certificate: None,
            timeout: wirebridge_store::RedisStore::DEFAULT_TIMEOUT,
            kept_turns_bytes: wirebridge_store::RedisStore::DEFAULT_KEPT_TURNS,
        })
    );
    assert!(load(None, &["--store", "disk"], &[]).is_err());
}

#[test]
fn custom_profiles_and_policy_from_the_file() {
    let file = "profile = \"mine\"\n[profiles.mine]\ndeveloper_role = true\nthink_tags = \"tags\"\n[loss_policy]\nhosted_tool = \"reject\"\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.profile.name, "mine");
    assert!(c.profile.developer_role);
    assert_eq!(
        c.policy.action(wirebridge_convert::LossKind::HostedTool),
        wirebridge_convert::LossAction::Reject
    );
}

#[test]
fn a_messages_backend_profile_from_the_file() {
    let file = "upstream_api = \"messages\"\nprofile = \"claude-proxy\"\n[profiles.claude-proxy.messages]\nmax_tokens = 16000\napi_key_header = true\nthinking_budgets = { low = 4000, high = 24000 }\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.upstream_api, UpstreamApi::Messages);
    let messages = &c.profile.messages;
    assert_eq!(messages.max_tokens, 16000);
    assert!(messages.api_key_header && !messages.cache_control);
    assert_eq!(messages.thinking_budget("medium"), Some(4000));
    assert_eq!(messages.version, "2023-06-01");
    let builtin = load(Some("profile = \"anthropic\"\n"), &[], &[]).unwrap();
    assert!(builtin.profile.messages.cache_control);
    let unknown = "profile = \"p\"\n[profiles.p.messages]\nmax_token = 1\n";
    assert!(load(Some(unknown), &[], &[]).is_err());
}

#[test]
fn inline_reasoning_is_split_unless_a_profile_turns_it_off() {
    use wirebridge_convert::profile::ThinkTags;
    let think_tags = |file: &str| load(Some(file), &[], &[]).unwrap().profile.think_tags;
    assert_eq!(think_tags(""), ThinkTags::Leading);
    assert_eq!(think_tags("profile = \"openai\"\n"), ThinkTags::Off);
    assert_eq!(
        think_tags("profile = \"mine\"\n[profiles.mine]\ndeveloper_role = true\n"),
        ThinkTags::Leading
    );
    for (value, mode) in [("off", ThinkTags::Off), ("leading", ThinkTags::Leading)] {
        let file = format!("profile = \"mine\"\n[profiles.mine]\nthink_tags = \"{value}\"\n");
        assert_eq!(think_tags(&file), mode, "{value}");
    }
    let file = "profile = \"mine\"\n[profiles.mine]\nthink_tags = \"sometimes\"\n";
    assert!(load(Some(file), &[], &[]).is_err());
}

#[test]
fn reasoning_output_and_seal_keys() {
    let key = SealKey::generate().to_base64();
    let old = SealKey::generate().to_base64();
    let file = format!(
        "reasoning_output = \"summary\"\nseal_key = \"{key}\"\nseal_previous_keys = [\"{old}\"]\n"
    );
    let c = load(Some(&file), &[], &[]).unwrap();
    assert_eq!(c.reasoning_output, Some(ReasoningOutput::Summary));
    assert!(!c.seal.generated);
    assert_eq!(c.seal.current, key.parse().unwrap());
    assert_eq!(c.seal.previous, vec![old.parse::<SealKey>().unwrap()]);
    let env = [("WIREBRIDGE_REASONING_OUTPUT", "auto")];
    let c = load(Some(&file), &[], &env).unwrap();
    assert_eq!(c.reasoning_output, Some(ReasoningOutput::Auto));
    let flags = &["--reasoning-output", "text"];
    let c = load(Some(&file), flags, &env).unwrap();
    assert_eq!(c.reasoning_output, Some(ReasoningOutput::Text));

    let c = load(None, &[], &[]).unwrap();
    assert!(c.seal.generated);
    assert_eq!(c.reasoning_output, None);

    let err = load(
        Some("\nseal_key = \"c2VjcmV0LWJ1dC1zaG9ydA==\"\n"),
        &[],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("seal_key") && err.contains("line 2"), "{err}");
    assert!(
        !err.contains("c2VjcmV0"),
        "the key is never repeated: {err}"
    );
    let err = load(None, &[], &[("WIREBRIDGE_SEAL_PREVIOUS_KEYS", "x,y")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("seal_previous_keys"), "{err}");
    let err = load(Some("reasoning_output = \"loud\"\n"), &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("reasoning_output") && err.contains("line 1"),
        "{err}"
    );
}

#[test]
fn errors_name_the_key_and_the_line() {
    let err = load(Some("listen = \"127.0.0.1:1\"\nlisen = 3\n"), &[], &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("lisen") && err.contains("line 2"), "{err}");
    let err = load(Some("\n\nprofile = \"nope\"\n"), &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'profile'") && err.contains("line 3") && err.contains("nope"),
        "{err}"
    );
    let err = load(Some("upstream_api = \"soap\"\n"), &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("upstream_api") && err.contains("line 1"),
        "{err}"
    );
    let err = load(Some("upstream = \"ftp://x\"\n"), &[], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'upstream'") && err.contains("line 1"),
        "{err}"
    );
    let err = load(None, &["--upstream-api-key-env", "NOPE_KEY"], &[]).unwrap_err();
    assert!(err.to_string().contains("NOPE_KEY"), "{err}");
}

#[test]
fn upstream_connect_timeout_and_label_from_each_source() {
    let c = load(None, &[], &[]).unwrap();
    assert_eq!(c.upstream_connect_timeout, Duration::from_secs(10));
    assert_eq!(c.upstream_label, "the upstream");
    let file = "upstream_connect_timeout = 3\nupstream_label = \"the model gateway\"\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.upstream_connect_timeout, Duration::from_secs(3));
    assert_eq!(c.upstream_label, "the model gateway");
    let flags = &[
        "--upstream-connect-timeout",
        "1500ms",
        "--upstream-label",
        "flagged",
    ];
    let c = load(Some(file), flags, &[]).unwrap();
    assert_eq!(c.upstream_connect_timeout, Duration::from_millis(1500));
    assert_eq!(c.upstream_label, "flagged");
    let env = [
        ("WIREBRIDGE_UPSTREAM_CONNECT_TIMEOUT", "250ms"),
        ("WIREBRIDGE_UPSTREAM_LABEL", " from the environment "),
    ];
    let c = load(Some(file), &[], &env).unwrap();
    assert_eq!(c.upstream_connect_timeout, Duration::from_millis(250));
    assert_eq!(c.upstream_label, "from the environment");
    let c = load(Some(file), flags, &env).unwrap();
    assert_eq!(c.upstream_connect_timeout, Duration::from_millis(1500));
    assert_eq!(c.upstream_label, "flagged");

    let err =
        |file: Option<&str>, env: &[(&str, &str)]| load(file, &[], env).unwrap_err().to_string();
    let e = err(None, &[("WIREBRIDGE_UPSTREAM_CONNECT_TIMEOUT", "-1")]);
    assert!(
        e.contains("upstream_connect_timeout") && e.contains("environment"),
        "{e}"
    );
    let e = err(Some("\nupstream_connect_timeout = true\n"), &[]);
    assert!(
        e.contains("upstream_connect_timeout") && e.contains("line 2"),
        "{e}"
    );
    let e = err(Some("upstream_label = \"two\\nlines\"\n"), &[]);
    assert!(e.contains("upstream_label") && e.contains("line 1"), "{e}");
    let e = err(None, &[("WIREBRIDGE_UPSTREAM_LABEL", " ")]);
    assert!(e.contains("upstream_label"), "{e}");
}

#[test]
fn upstream_credentials_are_split_off_and_never_repeated() {
    let c = load(
        Some("upstream = \"http://user:hunter2@gateway:8000/v1\"\n"),
        &[],
        &[],
    )
    .unwrap();
    let Upstream::Url(url) = &c.upstream else {
        panic!("a URL upstream");
    };
    assert_eq!(url.uri.to_string(), "http://gateway:8000/v1");
    assert_eq!(
        url.credentials.as_ref().unwrap().basic_pair(),
        b"user:hunter2"
    );
    assert!(!format!("{c:?}").contains("hunter2"));

    let err = load(
        None,
        &[],
        &[("WIREBRIDGE_UPSTREAM", "ftp://user:hunter2@gateway/v1")],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("'upstream'") && !err.contains("hunter2"),
        "{err}"
    );
}

#[test]
fn upstream_tls_files_are_for_an_https_upstream_only() {
    assert_eq!(
        load(None, &[], &[]).unwrap().upstream_tls,
        UpstreamTlsFiles::default()
    );
    let c = load(
        Some("upstream = \"https://models.internal/v1\"\nupstream_ca_file = \"/etc/wb/ca.pem\"\n"),
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(
        c.upstream_tls.ca_file,
        Some(PathBuf::from("/etc/wb/ca.pem"))
    );
    let https = ["--upstream", "https://models.internal/v1"];
    let c = load(None, &https, &[("WIREBRIDGE_UPSTREAM_CA_FILE", "/env.pem")]).unwrap();
    assert_eq!(c.upstream_tls.ca_file, Some(PathBuf::from("/env.pem")));
    let both = [
        ("WIREBRIDGE_UPSTREAM_CLIENT_CERT_FILE", "/client.pem"),
        ("WIREBRIDGE_UPSTREAM_CLIENT_KEY_FILE", "/client.key"),
    ];
    let c = load(None, &https, &both).unwrap();
    assert_eq!(
        c.upstream_tls.client_certificate,
        Some(ClientCertificate {
            cert_file: PathBuf::from("/client.pem"),
            key_file: PathBuf::from("/client.key"),
        })
    );
    let e = load(None, &https, &both[..1]).unwrap_err().to_string();
    assert!(
        e.contains("'upstream_client_cert_file'")
            && e.contains("upstream_client_key_file must be set too"),
        "{e}"
    );
    let e = load(None, &https, &both[1..]).unwrap_err().to_string();
    assert!(
        e.contains("'upstream_client_key_file'")
            && e.contains("upstream_client_cert_file must be set too"),
        "{e}"
    );
    for upstream in ["http://models.internal/v1", "demo"] {
        let e = load(
            None,
            &["--upstream", upstream, "--upstream-ca-file", "/ca.pem"],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'upstream_ca_file' (--upstream-ca-file)")
                && e.contains("an https:// upstream only"),
            "{e}"
        );
        let e = load(None, &["--upstream", upstream], &both)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'upstream_client_cert_file' (environment")
                && e.contains("an https:// upstream only"),
            "{e}"
        );
    }
}

#[test]
fn server_limits_from_each_source() {
    let c = load(None, &[], &[]).unwrap();
    assert_eq!(
        c.limits,
        ServerLimits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            body_read_timeout: Duration::from_secs(60),
            max_connections: None,
        }
    );

    // Strings with units, or numbers of seconds, in the file.
    let file = "header_read_timeout = \"2s\"\nidle_timeout = 90\nbody_read_timeout = 0.5\n\
                max_connections = 20\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.limits.header_read_timeout, Duration::from_secs(2));
    assert_eq!(c.limits.idle_timeout, Duration::from_secs(90));
    assert_eq!(c.limits.body_read_timeout, Duration::from_millis(500));
    assert_eq!(c.limits.max_connections, Some(20));

    let flags = &["--header-read-timeout", "3s", "--max-connections", "30"];
    let c = load(Some(file), flags, &[]).unwrap();
    assert_eq!(c.limits.header_read_timeout, Duration::from_secs(3));
    assert_eq!(c.limits.idle_timeout, Duration::from_secs(90));
    assert_eq!(c.limits.max_connections, Some(30));
    let env = [
        ("WIREBRIDGE_HEADER_READ_TIMEOUT", "4"),
        ("WIREBRIDGE_IDLE_TIMEOUT", "2m"),
        ("WIREBRIDGE_BODY_READ_TIMEOUT", "5s"),
        ("WIREBRIDGE_MAX_CONNECTIONS", "40"),
    ];
    let c = load(Some(file), flags, &env).unwrap();
    assert_eq!(c.limits.header_read_timeout, Duration::from_secs(3));
    assert_eq!(c.limits.idle_timeout, Duration::from_secs(120));
    assert_eq!(c.limits.body_read_timeout, Duration::from_secs(5));
    assert_eq!(c.limits.max_connections, Some(30));
}

#[test]
fn bad_limits_name_the_key() {
    let err =
        |file: Option<&str>, env: &[(&str, &str)]| load(file, &[], env).unwrap_err().to_string();
    let e = err(Some("\nidle_timeout = \"soon\"\n"), &[]);
    assert!(e.contains("'idle_timeout'") && e.contains("line 2"), "{e}");
    let e = err(Some("header_read_timeout = 0\n"), &[]);
    assert!(
        e.contains("header_read_timeout") && e.contains("positive"),
        "{e}"
    );
    let e = err(Some("body_read_timeout = true\n"), &[]);
    assert!(e.contains("body_read_timeout"), "{e}");
    let e = err(None, &[("WIREBRIDGE_IDLE_TIMEOUT", "25h")]);
    assert!(
        e.contains("idle_timeout") && e.contains("environment"),
        "{e}"
    );
    let e = err(None, &[("WIREBRIDGE_MAX_CONNECTIONS", "0")]);
    assert!(e.contains("max_connections"), "{e}");
    let e = err(Some("max_connections = 2000000\n"), &[]);
    assert!(e.contains("max_connections"), "{e}");
    let e = err(None, &[("WIREBRIDGE_MAX_CONNECTIONS", "many")]);
    assert!(e.contains("WIREBRIDGE_MAX_CONNECTIONS"), "{e}");
}

fn redis(c: &Config) -> &RedisSetting {
    match &c.store {
        StoreSetting::Redis(redis) => redis,
        other => panic!("{other:?}"),
    }
}

#[test]
fn redis_urls_tls_files_and_timeout() {
    let c = load(
        Some(
            "store = \"rediss://bridge:s3cret@redis.internal:6380/0\"\n\
             store_ca_file = \"/etc/wb/ca.pem\"\n\
             store_client_cert_file = \"/etc/wb/client.pem\"\n\
             store_client_key_file = \"/etc/wb/client.key\"\n\
             store_timeout = \"500ms\"\n\
             store_kept_turns_bytes = 0\n",
        ),
        &[],
        &[],
    )
    .unwrap();
    let r = redis(&c);
    assert!(r.tls);
    assert_eq!(r.ca_file, Some(PathBuf::from("/etc/wb/ca.pem")));
    assert_eq!(
        r.client_certificate,
        Some(ClientCertificate {
            cert_file: "/etc/wb/client.pem".into(),
            key_file: "/etc/wb/client.key".into(),
        })
    );
    assert_eq!(r.timeout, Duration::from_millis(500));
    assert_eq!(r.kept_turns_bytes, 0);
    // Logs and debug output never show the password.
    assert_eq!(r.shown(), "rediss://***@redis.internal:6380/0");
    assert!(!format!("{c:?}").contains("s3cret"));

    // The flag over the environment, the environment over the file.
    let c = load(
        Some("store_ca_file = \"/file.pem\"\nstore = \"rediss://h\"\n"),
        &["--store-ca-file", "/flag.pem", "--store-timeout", "3s"],
        &[("WIREBRIDGE_STORE_TIMEOUT", "4s")],
    )
    .unwrap();
    assert_eq!(redis(&c).ca_file, Some(PathBuf::from("/flag.pem")));
    assert_eq!(redis(&c).timeout, Duration::from_secs(3));
    let c = load(
        None,
        &[],
        &[
            ("WIREBRIDGE_STORE", "rediss+cluster://a:7000,b:7001"),
            ("WIREBRIDGE_STORE_CA_FILE", "/env.pem"),
        ],
    )
    .unwrap();
    assert!(redis(&c).tls);
    assert_eq!(redis(&c).ca_file, Some(PathBuf::from("/env.pem")));
    for url in [
        "redis+cluster://a:7000,b:7001",
        "valkey://h/1",
        "redis+unix:///run/r.sock",
    ] {
        let c = load(None, &[], &[("WIREBRIDGE_STORE", url)]).unwrap();
        assert_eq!(redis(&c).url, url);
        assert!(!redis(&c).tls, "{url}");
    }
}

#[test]
fn redis_settings_that_cannot_be_used() {
    let refused = |file: &str, env: &[(&str, &str)]| -> String {
        load(Some(file), &[], env).expect_err(file).to_string()
    };
    let message = refused("store = \"redis://h\"\nstore_ca_file = \"/ca.pem\"\n", &[]);
    assert!(
        message.contains("store_ca_file") && message.contains("TLS"),
        "{message}"
    );
    let message = refused("store_ca_file = \"/ca.pem\"\n", &[]);
    assert!(message.contains("store_ca_file"), "{message}");
    let message = refused(
        "store = \"rediss://h\"\nstore_client_cert_file = \"/c.pem\"\n",
        &[],
    );
    assert!(message.contains("store_client_key_file"), "{message}");
    let message = refused("store = \"rediss://h\"\nstore_timeout = \"0s\"\n", &[]);
    assert!(message.contains("store_timeout"), "{message}");
    for url in [
        "http://user:s3cret@h/",
        "redis+cluster://user:s3cret@a:1,,b:2",
        "rediss://user:s3cret@h#insecure",
    ] {
        let message = refused("", &[("WIREBRIDGE_STORE", url)]);
        assert!(message.contains("'store'"), "{message}");
        assert!(!message.contains("s3cret"), "{message}");
    }
}

#[test]
fn workers_one_per_core_unless_set() {
    let c = load(None, &[], &[]).unwrap();
    assert_eq!(c.runtime, RuntimeSettings { workers: None });
    assert!(c.runtime.workers() >= 1);
    let c = load(Some("workers = 3\n"), &[], &[]).unwrap();
    assert_eq!(c.runtime.workers(), 3);
}

#[test]
fn bad_workers_settings_name_the_key() {
    let err =
        |file: Option<&str>, env: &[(&str, &str)]| load(file, &[], env).unwrap_err().to_string();
    let e = err(Some("workers = 0\n"), &[]);
    assert!(e.contains("'workers'"), "{e}");
    let e = err(None, &[("WIREBRIDGE_WORKERS", "lots")]);
    assert!(e.contains("WIREBRIDGE_WORKERS"), "{e}");
    let e = err(None, &[("WIREBRIDGE_WORKERS", "100000")]);
    assert!(e.contains("'workers'") && e.contains("1024"), "{e}");
}

#[test]
fn the_removed_runtime_setting_is_refused_by_name() {
    for file in [
        "\nruntime = \"per-core\"\n",
        "\nruntime = \"multi-thread\"\n",
    ] {
        let e = load(Some(file), &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("'runtime'") && e.contains("line 2") && e.contains("removed"),
            "{e}"
        );
    }
}

#[test]
fn the_bound_on_stored_items_a_request_takes_in_from_each_source() {
    // Unset, it follows the body limit (the layer doubles it).
    assert_eq!(load(None, &[], &[]).unwrap().state.max_resolved_input, None);
    let file = "max_resolved_input = 1048576\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.state.max_resolved_input, Some(1 << 20));
    let flags = &["--max-resolved-input", "2097152"];
    let c = load(Some(file), flags, &[]).unwrap();
    assert_eq!(c.state.max_resolved_input, Some(2 << 20));
    let env = [("WIREBRIDGE_MAX_RESOLVED_INPUT", "3145728")];
    assert_eq!(
        load(Some(file), &[], &env)
            .unwrap()
            .state
            .max_resolved_input,
        Some(3 << 20)
    );
    let e = load(None, &[], &[("WIREBRIDGE_MAX_RESOLVED_INPUT", "0")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_resolved_input"), "{e}");
}
