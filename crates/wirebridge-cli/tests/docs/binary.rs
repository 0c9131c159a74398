//! What the binary and the harness say: their flags, variables and settings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::pages::*;
use crate::*;

/// Whether `wirebridge serve` accepts the settings file at `path` (its keys,
/// and their types). Loading is stopped before anything is served by an
/// upstream URL that cannot be used: `--upstream` is read after the file, so
/// a file that loads ends with that error, and a file that does not ends
/// with its own.
pub(crate) fn accepts_settings_file(path: &Path) -> Result<(), String> {
    let output = wirebridge(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "ftp://settings-check.invalid",
        "--config",
        path.to_str().expect("a UTF-8 path"),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(2) && stderr.contains("invalid setting 'upstream'") {
        Ok(())
    } else {
        Err(stderr.trim().to_owned())
    }
}

/// The `WIREBRIDGE_*` variables the binary reads: those `serve --help`
/// names, those of the settings declared without a flag (a variable per
/// key of `config/settings.rs`), and the string literals of the cli crate's
/// source.
pub(crate) fn binary_variables() -> BTreeSet<String> {
    let help = String::from_utf8(wirebridge(&["serve", "--help"]).stdout).expect("UTF-8 help");
    let mut names: BTreeSet<String> = read_variables(&help, &["env: "]).into_iter().collect();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let declared = std::fs::read_to_string(src.join("config/settings.rs")).expect("the settings");
    for line in declared.lines().map(str::trim) {
        let key = line.split(':').next().unwrap_or_default();
        let is_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if is_key && line.contains('=') && line.ends_with(';') {
            names.insert(format!("WIREBRIDGE_{}", key.to_ascii_uppercase()));
        }
    }
    for file in files(&src) {
        if file.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&file).expect("a source file");
            names.extend(read_variables(&text, &["\""]));
        }
    }
    names
}

/// The `WIREBRIDGE_*` variables the test harness and the benchmarks read:
/// string literals, and shell expansions.
pub(crate) fn harness_variables() -> BTreeSet<String> {
    let root = root();
    let mut names = BTreeSet::new();
    for source in HARNESS_SOURCES {
        for file in files(&root.join(source)) {
            let code = file
                .extension()
                .is_some_and(|e| e == "rs" || e == "py" || e == "sh");
            if let (true, Ok(text)) = (code, std::fs::read_to_string(&file)) {
                names.extend(read_variables(&text, &["\"", "'", "$", "${"]));
            }
        }
    }
    names
}

/// Each flag of `wirebridge serve`, with the default its `--help` shows, if
/// it shows one.
pub(crate) fn serve_defaults() -> BTreeMap<String, Option<String>> {
    let help = String::from_utf8(wirebridge(&["serve", "--help"]).stdout).expect("UTF-8 help");
    // An entry's heading is its flags and value (`-h, --help`,
    // `--listen <ADDR>`), its help the lines below it.
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in help.lines().map(str::trim) {
        let heading = line.starts_with('-')
            && line
                .split_whitespace()
                .all(|word| word.starts_with(['-', '<']));
        match entries.last_mut() {
            _ if heading => entries.push((line.to_owned(), String::new())),
            Some((_, text)) => {
                text.push(' ');
                text.push_str(line);
            }
            None => {}
        }
    }
    entries
        .into_iter()
        .filter_map(|(heading, text)| {
            let name = heading.split([' ', ',']).find_map(flag)?;
            let default = text.split_once("[default: ").map(|(_, rest)| {
                let (default, _) = rest.split_once(']').expect("a closed [default: …]");
                default.to_owned()
            });
            Some((name, default))
        })
        .collect()
}

/// The default declared for a setting of `config/settings.rs`, as written
/// there: for the settings without a flag, which `--help` does not show.
pub(crate) fn declared_default(key: &str) -> Option<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/settings.rs");
    let declared = std::fs::read_to_string(src).expect("the settings");
    let start = declared.find(&format!("\n    {key}: "))?;
    let declaration = &declared[start..];
    let declaration = &declaration[..declaration.find(';')?];
    let (_, default) = declaration.split_once('=')?;
    let default = default.trim_start().strip_prefix('"')?;
    Some(default.split_once('"')?.0.to_owned())
}

/// Each subcommand of `wirebridge --help`, with the flags its own `--help`
/// lists.
pub(crate) fn flags_by_subcommand() -> BTreeMap<String, BTreeSet<String>> {
    let help = String::from_utf8(wirebridge(&["--help"]).stdout).expect("UTF-8 help");
    let subcommands: Vec<String> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(
        subcommands.iter().any(|name| name == "serve"),
        "no subcommands in `wirebridge --help`:\n{help}"
    );
    subcommands
        .into_iter()
        .map(|name| {
            let help = wirebridge(&[&name, "--help"]).stdout;
            let flags = String::from_utf8(help)
                .expect("UTF-8 help")
                .lines()
                .map(str::trim_start)
                .filter(|line| line.starts_with('-'))
                .flat_map(|line| line.split([' ', ',']))
                .filter_map(flag)
                .collect();
            (name, flags)
        })
        .collect()
}

/// Runs the binary with no `WIREBRIDGE_*` variable set, for at most 20 s.
pub(crate) fn wirebridge(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wirebridge"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WIREBRIDGE_") {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().expect("the binary starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child
        .try_wait()
        .expect("the binary is waited for")
        .is_none()
    {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`wirebridge {}` did not exit within 20 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the binary's output")
}

// ---------------------------------------------------------------------------
// Reading the pages.

/// A `toml` block for Codex's `~/.codex/config.toml`, not for the bridge.
pub(crate) fn is_codex_config(toml: &str) -> bool {
    toml.lines()
        .any(|line| line.trim_start().starts_with("[model_providers"))
}

/// A `toml` block for a Cargo manifest (a program's `[dependencies]`), not
/// for the bridge.
pub(crate) fn is_cargo_manifest(toml: &str) -> bool {
    toml.lines()
        .any(|line| ["[package]", "[dependencies]", "[dev-dependencies]"].contains(&line.trim()))
}

pub(crate) fn scratch_dir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wirebridge-docs-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
