//! Keeps the documentation honest. README.md and every page under `docs/`
//! are read, and what they say about the repository and the binary is
//! checked against them; each failure names the file, the line and the item:
//!
//! - relative links resolve: the file exists, and a `#anchor` is a heading
//!   of that file (GitHub's slugs);
//! - `wirebridge SUBCOMMAND … --flag`, in code blocks and inline code, names
//!   a flag that `wirebridge SUBCOMMAND --help` lists; every `--flag` in the
//!   prose of the settings page (and of the other pages about the proxy) is
//!   one of `serve`'s, and every flag of `serve` is on the settings page;
//! - the usage block of the settings page shows `wirebridge serve`, and each
//!   subcommand it shows with every flag that subcommand's `--help` lists;
//! - every `WIREBRIDGE_*` variable is one the binary reads (or, on the pages
//!   about tests and benchmarks, one the test harness reads);
//! - every repository path in code (`scripts/…`, `tests/…`, `crates/…`,
//!   `docs/…`, `fuzz/…`, `examples/…`) exists;
//! - the settings table of the settings page gives each default as
//!   `wirebridge serve --help` shows it (a setting without a flag, as it is
//!   declared), and has a row for each flag that has one;
//! - every settings file in a `toml` block is accepted by the binary (a
//!   Codex config or a Cargo manifest is none);
//! - README.md links every page under `docs/`.
//!
//! README.md's Rust examples are doc tests of the `wirebridge` crate
//! (`cargo test --doc -p wirebridge`), compiled and run.

mod binary;
mod pages;

use std::collections::BTreeMap;

use binary::*;
use pages::*;

/// Pages about the proxy, whose prose names no flag but `wirebridge serve`'s.
pub(crate) const SERVE_PAGES: &[&str] = &[
    "docs/settings.md",
    "docs/operating.md",
    "docs/replicas.md",
    "docs/state.md",
    "docs/websocket.md",
    "docs/compaction.md",
    "docs/loss-policy.md",
    "docs/mappings/responses-over-chat.md",
    "docs/mappings/chat-over-responses.md",
];

/// The page that documents every flag of `wirebridge serve`.
pub(crate) const SETTINGS_PAGE: &str = "docs/settings.md";

/// Pages that may name the variables the test harness and the benchmarks
/// read, beside the binary's own.
pub(crate) const HARNESS_PAGES: &[&str] = &[
    "docs/testing.md",
    "docs/performance.md",
    "docs/performance-journal.md",
];

/// Directories, from the repository root, whose paths the pages name.
pub(crate) const REPOSITORY_DIRS: &[&str] = &[
    "scripts/",
    "tests/",
    "crates/",
    "docs/",
    "fuzz/",
    "examples/",
];

/// Where the test harness and the benchmarks read their variables.
pub(crate) const HARNESS_SOURCES: &[&str] = &[
    "tests",
    "scripts",
    "fuzz/seed.py",
    "crates/wirebridge-bench/src",
    "crates/wirebridge-testkit/src",
];

// ---------------------------------------------------------------------------
// The checks.

#[test]
fn relative_links_resolve() {
    let pages = pages();
    let mut problems = Vec::new();
    for page in &pages {
        for block in page.blocks() {
            if block.kind != Kind::Prose {
                continue;
            }
            let (_, outside) = code_spans(&block.text);
            for (offset, target) in links(&outside) {
                let at = page.at(block.line_of(offset));
                if let Err(problem) = resolve_link(page, &target) {
                    problems.push(format!("{at}: link `{target}`: {problem}"));
                }
            }
        }
    }
    report("relative links", problems);
}

#[test]
fn commands_name_flags_their_subcommand_lists() {
    let flags = flags_by_subcommand();
    let serve = &flags["serve"];
    let mut problems = Vec::new();
    for page in pages() {
        let serve_page = SERVE_PAGES.contains(&page.path.as_str());
        for block in page.blocks() {
            match &block.kind {
                Kind::Code(_) => {
                    for (index, line) in logical_lines(&block.text) {
                        let at = page.at(block.line + index);
                        check_commands(&line, &flags, &at, &mut problems);
                    }
                }
                Kind::Prose => {
                    let (spans, outside) = code_spans(&block.text);
                    for (offset, span) in spans {
                        let at = page.at(block.line_of(offset));
                        let found = check_commands(&span, &flags, &at, &mut problems);
                        if serve_page && !found {
                            check_serve_flags(&span, serve, &at, &mut problems);
                        }
                    }
                    if serve_page {
                        for (index, line) in outside.lines().enumerate() {
                            let at = page.at(block.line + index);
                            check_serve_flags(line, serve, &at, &mut problems);
                        }
                    }
                }
                Kind::Heading => {}
            }
        }
    }
    let settings = std::fs::read_to_string(root().join(SETTINGS_PAGE)).expect("the settings page");
    for flag in serve {
        if flag != "help" && !settings.contains(&format!("--{flag}")) {
            problems.push(format!(
                "{SETTINGS_PAGE}: `wirebridge serve --{flag}` is not documented"
            ));
        }
    }
    report("flags", problems);
}

#[test]
fn the_usage_block_lists_every_flag() {
    let flags = flags_by_subcommand();
    let page = pages()
        .into_iter()
        .find(|page| page.path == SETTINGS_PAGE)
        .expect("the settings page");
    let usage = usage(&page);
    let mut problems = Vec::new();
    if !usage.contains_key("serve") {
        problems.push(format!(
            "{SETTINGS_PAGE}: no usage block (a code block with `wirebridge serve [--flag …]`)"
        ));
    }
    for (subcommand, (line, shown)) in &usage {
        let Some(known) = flags.get(subcommand) else {
            continue;
        };
        for name in known.iter().filter(|name| *name != "help") {
            if !shown.contains(name) {
                problems.push(format!(
                    "{}: the usage of `wirebridge {subcommand}` lacks `--{name}`",
                    page.at(*line)
                ));
            }
        }
    }
    report("the usage block", problems);
}

#[test]
fn variables_are_ones_the_binary_reads() {
    let binary = binary_variables();
    let harness = harness_variables();
    assert!(
        binary.contains("WIREBRIDGE_UPSTREAM"),
        "the binary's variables were not found: re-point binary_variables()"
    );
    let mut problems = Vec::new();
    for page in pages() {
        let harness_page = HARNESS_PAGES.contains(&page.path.as_str());
        for (offset, name) in variables(&page.text) {
            let at = page.at(line_at(&page.text, offset));
            if binary.contains(&name) || (harness_page && harness.contains(&name)) {
                continue;
            }
            if harness.contains(&name) {
                problems.push(format!(
                    "{at}: `{name}` is read by the tests, not by the binary \
                     (only {HARNESS_PAGES:?} may name it)"
                ));
            } else {
                problems.push(format!("{at}: `{name}` is not read by the binary"));
            }
        }
    }
    report("WIREBRIDGE_* variables", problems);
}

#[test]
fn repository_paths_exist() {
    let root = root();
    let mut problems = Vec::new();
    for page in pages() {
        for block in page.blocks() {
            let mut words: Vec<(usize, String)> = Vec::new();
            match &block.kind {
                Kind::Code(_) => {
                    for (index, line) in block.text.lines().enumerate() {
                        for word in line.split_whitespace() {
                            words.push((block.line + index, word.to_owned()));
                        }
                    }
                }
                Kind::Prose => {
                    for (offset, span) in code_spans(&block.text).0 {
                        for word in span.split_whitespace() {
                            words.push((block.line_of(offset), word.to_owned()));
                        }
                    }
                }
                Kind::Heading => {}
            }
            for (line, word) in words {
                let Some(path) = repository_path(&word) else {
                    continue;
                };
                if !root.join(path).exists() {
                    problems.push(format!("{}: `{path}` does not exist", page.at(line)));
                }
            }
        }
    }
    report("repository paths", problems);
}

#[test]
fn settings_files_are_accepted() {
    let dir = scratch_dir();
    let mut problems = Vec::new();
    for page in pages() {
        for block in page.blocks() {
            if block.kind != Kind::Code("toml".into())
                || is_codex_config(&block.text)
                || is_cargo_manifest(&block.text)
            {
                continue;
            }
            let file = dir.join(format!("block-{}.toml", block.line));
            std::fs::write(&file, &block.text).expect("the scratch file is written");
            if let Err(message) = accepts_settings_file(&file) {
                problems.push(format!(
                    "{}: the settings file is refused: {message}",
                    page.at(block.line)
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    report("settings files", problems);
}

/// The settings check itself: it must tell a key the binary refuses.
#[test]
fn the_settings_check_refuses_an_unknown_key() {
    let dir = scratch_dir();
    let known = dir.join("known.toml");
    let unknown = dir.join("unknown.toml");
    std::fs::write(&known, "profile = \"vllm\"\n").unwrap();
    std::fs::write(&unknown, "profile = \"vllm\"\nno_such_key = 1\n").unwrap();
    let known = accepts_settings_file(&known);
    let unknown = accepts_settings_file(&unknown);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        known.is_ok(),
        "a known key is refused (re-point accepts_settings_file()): {known:?}"
    );
    let message = unknown.expect_err("an unknown key is accepted");
    assert!(message.contains("no_such_key"), "{message}");
}

#[test]
fn the_settings_table_gives_each_default_serve_shows() {
    let page = settings_page();
    let rows = settings_table(&page);
    assert!(
        rows.len() > 10,
        "no settings table on {SETTINGS_PAGE} (re-point settings_table())"
    );
    report(
        "the defaults in the settings table",
        check_defaults(&page, &rows, &serve_defaults()),
    );
}

/// The defaults check itself: it must tell a default `--help` does not show.
#[test]
fn the_defaults_check_refuses_a_wrong_default() {
    let page = settings_page();
    let shown = serve_defaults();
    let mut rows = settings_table(&page);
    assert!(
        check_defaults(&page, &rows, &shown).is_empty(),
        "the settings table is wrong already"
    );
    let row = rows
        .iter_mut()
        .find(|row| row.key == "idle_timeout")
        .expect("the idle_timeout row");
    row.default = "`9999s`".into();
    let problems = check_defaults(&page, &rows, &shown);
    assert!(
        problems.len() == 1 && problems[0].contains("`idle_timeout`"),
        "{problems:?}"
    );
}

#[test]
fn the_readme_links_every_page() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut problems = Vec::new();
    for page in pages() {
        if page.path != "README.md" && !readme.contains(&format!("]({})", page.path)) {
            problems.push(format!(
                "README.md: `{}` is not in its documentation list",
                page.path
            ));
        }
    }
    report("the documentation list", problems);
}

fn settings_page() -> Page {
    pages()
        .into_iter()
        .find(|page| page.path == SETTINGS_PAGE)
        .expect("the settings page")
}

/// What is wrong with the defaults in `rows` of the settings table, against
/// `shown` (each flag of `wirebridge serve` and the default its `--help`
/// shows).
fn check_defaults(
    page: &Page,
    rows: &[SettingRow],
    shown: &BTreeMap<String, Option<String>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for row in rows {
        let at = page.at(row.line);
        let (default, source) = match &row.flag {
            Some(flag) => match shown.get(flag) {
                // A flag whose help shows no default has none.
                Some(default) => {
                    let default = default.clone().unwrap_or_else(|| "none".into());
                    let source = format!(
                        "`wirebridge serve --help` shows [default: {default}] for `--{flag}`"
                    );
                    (default, source)
                }
                None => {
                    problems.push(format!(
                        "{at}: `--{flag}`: `wirebridge serve --help` lists no such flag"
                    ));
                    continue;
                }
            },
            None => match declared_default(&row.key) {
                Some(default) => {
                    let source = format!("config/settings.rs declares \"{default}\"");
                    (default, source)
                }
                None => {
                    problems.push(format!("{at}: `{}` is no declared setting", row.key));
                    continue;
                }
            },
        };
        if !gives_default(&row.default, &default) {
            problems.push(format!(
                "{at}: `{}`: the table says {}; {source}",
                row.key, row.default
            ));
        }
    }
    for (flag, default) in shown {
        let listed = rows.iter().any(|row| row.flag.as_deref() == Some(flag));
        if let (Some(default), false) = (default, listed) {
            problems.push(format!(
                "{SETTINGS_PAGE}: `--{flag}` (default `{default}`) has no row in the settings table"
            ));
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// What the binary knows. Each function is the one place that finds it out.

fn report(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "the documentation is wrong about {what}:\n{}",
        problems.join("\n")
    );
}
