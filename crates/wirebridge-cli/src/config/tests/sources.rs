//! Where each setting comes from: its flag, else its environment variable,
//! else the file, else its default; and errors that say which it was.

use std::time::Duration;

use clap::{Args, Command};
use wirebridge_tower::MissingHistory;

use super::{load, settings_file};
use crate::config::{Config, LogFormat, ServeFlags, Settings, Upstream, UpstreamUrl};

/// `get` of the settings with no source, with `file`, with `file` and
/// `env`, and with all three and `flags`: `expected`, in that order.
fn layers<T: PartialEq + std::fmt::Debug>(
    get: impl Fn(&Config) -> T,
    file: &str,
    env: (&str, &str),
    flags: &[&str],
    expected: [T; 4],
) {
    let [default, in_file, in_env, flagged] = expected;
    assert_eq!(get(&load(None, &[], &[]).unwrap()), default, "the default");
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(get(&c), in_file, "the file over the default: {file}");
    let c = load(Some(file), &[], &[env]).unwrap();
    assert_eq!(get(&c), in_env, "the environment over the file: {env:?}");
    let c = load(Some(file), flags, &[env]).unwrap();
    assert_eq!(get(&c), flagged, "the flag over the environment: {flags:?}");
}

#[test]
fn the_flag_over_the_environment_over_the_file_over_the_default() {
    // Text.
    layers(
        |c| c.profile.name.clone(),
        "profile = \"vllm\"\n",
        ("WIREBRIDGE_PROFILE", "deepseek"),
        &["--profile", "ollama"],
        ["generic", "vllm", "deepseek", "ollama"].map(String::from),
    );
    let url = |u: &str| {
        Upstream::Url(UpstreamUrl {
            uri: u.parse().unwrap(),
            credentials: None,
        })
    };
    layers(
        |c| c.upstream.clone(),
        "upstream = \"http://file:1/v1\"\n",
        ("WIREBRIDGE_UPSTREAM", "http://env:1/v1"),
        &["--upstream", "demo"],
        [
            Upstream::Demo,
            url("http://file:1/v1"),
            url("http://env:1/v1"),
            Upstream::Demo,
        ],
    );
    // Numbers.
    layers(
        |c| c.runtime.workers,
        "workers = 3\n",
        ("WIREBRIDGE_WORKERS", "2"),
        &["--workers", "5"],
        [None, Some(3), Some(2), Some(5)],
    );
    layers(
        |c| c.max_body,
        "max_body = 1000\n",
        ("WIREBRIDGE_MAX_BODY", "2000"),
        &["--max-body", "3000"],
        [32 << 20, 1000, 2000, 3000],
    );
    // Durations.
    let secs = Duration::from_secs_f64;
    layers(
        |c| c.limits.idle_timeout,
        "idle_timeout = 90\n",
        ("WIREBRIDGE_IDLE_TIMEOUT", "2m"),
        &["--idle-timeout", "1500ms"],
        [secs(75.0), secs(90.0), secs(120.0), secs(1.5)],
    );
    // Switches, each way.
    layers(
        |c| c.exchange.websocket,
        "websocket = false\n",
        ("WIREBRIDGE_WEBSOCKET", "true"),
        &["--no-websocket"],
        [true, false, true, false],
    );
    layers(
        |c| c.state.anonymous_store,
        "anonymous_store = true\n",
        ("WIREBRIDGE_ANONYMOUS_STORE", "0"),
        &["--anonymous-store"],
        [false, true, false, true],
    );
    layers(
        |c| c.state.trust_credentials,
        "trust_credentials = true\n",
        ("WIREBRIDGE_TRUST_CREDENTIALS", "0"),
        &["--trust-credentials"],
        [false, true, false, true],
    );
    // Names from a list.
    layers(
        |c| c.log_format,
        "log_format = \"json\"\n",
        ("WIREBRIDGE_LOG_FORMAT", "pretty"),
        &["--log-format", "json"],
        [
            LogFormat::Pretty,
            LogFormat::Json,
            LogFormat::Pretty,
            LogFormat::Json,
        ],
    );
    layers(
        |c| c.state.missing_history,
        "missing_history = \"continue\"\n",
        ("WIREBRIDGE_MISSING_HISTORY", "refuse"),
        &["--missing-history", "continue"],
        [
            MissingHistory::Refuse,
            MissingHistory::Continue,
            MissingHistory::Refuse,
            MissingHistory::Continue,
        ],
    );
    // An address.
    layers(
        |c| c.metrics.listen.map(|a| a.port()),
        "metrics_listen = \"127.0.0.1:1\"\n",
        ("WIREBRIDGE_METRICS_LISTEN", "127.0.0.1:2"),
        &["--metrics-listen", "127.0.0.1:3"],
        [None, Some(1), Some(2), Some(3)],
    );
}

#[test]
fn the_later_of_a_switch_s_two_flags_wins() {
    let websocket = |flags: &[&str]| {
        let env = [("WIREBRIDGE_WEBSOCKET", "false")];
        load(None, flags, &env).unwrap().exchange.websocket
    };
    assert!(!websocket(&[]));
    assert!(websocket(&["--websocket"]));
    assert!(websocket(&["--no-websocket", "--websocket"]));
    assert!(!websocket(&["--websocket", "--no-websocket"]));
}

#[test]
fn the_config_flag_over_its_variable() {
    let vllm = settings_file("profile = \"vllm\"\n");
    let ollama = settings_file("profile = \"ollama\"\n");
    let env = |k: &str| (k == "WIREBRIDGE_CONFIG").then(|| vllm.to_str().unwrap().to_owned());
    let c = Config::load(&ServeFlags::parse(&[]), &env).unwrap();
    assert_eq!(c.profile.name, "vllm");
    let flags = ServeFlags::parse(&["--config", ollama.to_str().unwrap()]);
    let c = Config::load(&flags, &env).unwrap();
    assert_eq!(c.profile.name, "ollama");
}

#[test]
fn errors_name_the_source_of_the_value() {
    let err = |file: Option<&str>, flags: &[&str], env: &[(&str, &str)]| {
        load(file, flags, env).unwrap_err().to_string()
    };
    let bad = "'soon' is not a duration (such as 10s, 500ms, 2m or a number of seconds)";
    assert_eq!(
        err(None, &["--idle-timeout", "soon"], &[]),
        format!("invalid setting 'idle_timeout' (--idle-timeout): {bad}")
    );
    assert_eq!(
        err(None, &[], &[("WIREBRIDGE_IDLE_TIMEOUT", "soon")]),
        format!("invalid setting 'idle_timeout' (environment WIREBRIDGE_IDLE_TIMEOUT): {bad}")
    );
    let e = err(Some("\nidle_timeout = \"soon\"\n"), &[], &[]);
    assert!(e.starts_with("invalid setting 'idle_timeout' ("), "{e}");
    assert!(e.ends_with(&format!(".toml line 2): {bad}")), "{e}");
    // A switch flag.
    let e = err(None, &[], &[("WIREBRIDGE_ANONYMOUS_STORE", "yes")]);
    assert_eq!(
        e,
        "invalid setting 'anonymous_store' (environment WIREBRIDGE_ANONYMOUS_STORE): \
         'yes' is not true or false"
    );
    // A check of one setting against another names where the one came from.
    let e = err(None, &["--store-ca-file", "/ca.pem"], &[]);
    assert!(e.contains("'store_ca_file' (--store-ca-file)"), "{e}");
    let e = err(
        None,
        &[],
        &[("WIREBRIDGE_UPSTREAM_API_KEY_ENV", "NOPE_KEY")],
    );
    assert!(
        e.contains("(environment WIREBRIDGE_UPSTREAM_API_KEY_ENV)") && e.contains("NOPE_KEY"),
        "{e}"
    );
    // A value under the one that wins is not read.
    let c = load(
        Some("idle_timeout = \"later\"\n"),
        &["--idle-timeout", "3s"],
        &[("WIREBRIDGE_IDLE_TIMEOUT", "soon")],
    )
    .unwrap();
    assert_eq!(c.limits.idle_timeout, Duration::from_secs(3));
}

/// Every flag of `serve` (but `--config`, as a file cannot name itself)
/// has the environment variable and the file key of its name, and each of
/// the three is read: a bad value there is refused, naming it.
#[test]
fn every_flag_has_a_variable_and_a_file_key_of_its_name() {
    let command = ServeFlags::augment_args(Command::new("serve"));
    let flags: Vec<_> = command
        .get_arguments()
        .filter_map(|arg| Some((arg.get_long()?, !arg.get_action().takes_values())))
        .filter(|(long, _)| *long != "config")
        .collect();
    assert!(flags.len() > 30, "{flags:?}");
    let bad = "\u{7}";
    let error = |flags: &[&str], env: &[(&str, &str)], file: Option<&str>| {
        load(file, flags, env).unwrap_err().to_string()
    };
    for (long, switch) in flags {
        let name = match switch {
            true => long.strip_prefix("no-").unwrap_or(long),
            false => long,
        };
        let key = name.replace('-', "_");
        let var = format!("WIREBRIDGE_{}", key.to_ascii_uppercase());

        let e = error(&[], &[(&var, bad)], None);
        assert!(e.contains(&format!("'{key}' (environment {var}): ")), "{e}");
        let e = error(&[], &[], Some(&format!("\n{key} = \"\\u0007\"\n")));
        assert!(e.contains(&format!("'{key}' (")), "{e}");
        assert!(e.contains(".toml line 2): "), "{e}");
        if switch {
            // A switch's flag takes no value: it wins over a bad one.
            let flag = format!("--{long}");
            assert!(load(None, &[&flag], &[(&var, bad)]).is_ok(), "{flag}");
        } else {
            let flag = format!("--{long}={bad}");
            let e = error(&[&flag], &[(&var, "also bad")], None);
            assert!(e.contains(&format!("'{key}' (--{long}): ")), "{e}");
        }
    }
}

/// Settings without a flag are still read from their variable and key.
#[test]
fn secrets_have_no_flag_but_a_variable_and_a_key() {
    let secret: Vec<_> = Settings::DECLARED.iter().filter(|d| !d.flag).collect();
    let keys: Vec<_> = secret.iter().map(|d| d.key).collect();
    assert_eq!(keys, ["seal_key", "seal_previous_keys"]);
    for declared in secret {
        let (key, var) = (declared.key, declared.env_var());
        let e = load(None, &[], &[(&var, "x")]).unwrap_err().to_string();
        assert!(e.contains(&format!("'{key}' (environment {var}): ")), "{e}");
        let file = format!("{key} = \"x\"\n");
        let e = load(Some(&file), &[], &[]).unwrap_err().to_string();
        assert!(e.contains(&format!("'{key}' (")), "{e}");
    }
}

#[test]
fn serve_help_shows_each_default_and_variable() {
    let mut command = ServeFlags::augment_args(Command::new("serve"));
    let help = command.render_long_help().to_string();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    // Flags come in the order declared; a value flag's heading is followed
    // by its value name.
    let mut at = 0;
    for declared in Settings::DECLARED.iter().filter(|d| d.flag) {
        let flag = match declared.switch {
            true => format!("--{} ", declared.flag_name()),
            false => format!("--{} <", declared.flag_name()),
        };
        let shown = format!(
            "[default: {}] [env: {}]",
            declared.default,
            declared.env_var()
        );
        at += help[at..]
            .find(&flag)
            .unwrap_or_else(|| panic!("{flag}: {help}"));
        // The first default after the flag is its own.
        let own = &help[at..];
        let own = &own[own.find("[default: ").unwrap()..];
        assert!(own.starts_with(&shown), "{flag}: {own}");
    }
    assert!(help.contains("--config <FILE> Settings file (TOML) [env: WIREBRIDGE_CONFIG]"));
    assert!(
        help.contains("--upstream-api <chat|responses|messages> "),
        "{help}"
    );
    assert!(
        help.contains("--no-websocket The opposite of --websocket"),
        "{help}"
    );
}
