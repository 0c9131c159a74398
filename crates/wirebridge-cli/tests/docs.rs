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
//! - every `WIREBRIDGE_*` variable is one the binary reads (or, on the pages
//!   about tests and benchmarks, one the test harness reads);
//! - every repository path in code (`scripts/…`, `tests/…`, `crates/…`,
//!   `docs/…`, `fuzz/…`, `examples/…`) exists;
//! - every settings file in a `toml` block is accepted by the binary;
//! - README.md links every page under `docs/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Pages about the proxy, whose prose names no flag but `wirebridge serve`'s.
const SERVE_PAGES: &[&str] = &[
    "docs/settings.md",
    "docs/operating.md",
    "docs/state.md",
    "docs/websocket.md",
    "docs/compaction.md",
    "docs/loss-policy.md",
    "docs/mappings/responses-over-chat.md",
    "docs/mappings/chat-over-responses.md",
];

/// The page that documents every flag of `wirebridge serve`.
const SETTINGS_PAGE: &str = "docs/settings.md";

/// Pages that may name the variables the test harness and the benchmarks
/// read, beside the binary's own.
const HARNESS_PAGES: &[&str] = &["docs/testing.md", "docs/performance.md"];

/// Directories, from the repository root, whose paths the pages name.
const REPOSITORY_DIRS: &[&str] = &[
    "scripts/",
    "tests/",
    "crates/",
    "docs/",
    "fuzz/",
    "examples/",
];

/// Where the test harness and the benchmarks read their variables.
const HARNESS_SOURCES: &[&str] = &[
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
            if block.kind != Kind::Code("toml".into()) || is_codex_config(&block.text) {
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

// ---------------------------------------------------------------------------
// What the binary knows. Each function is the one place that finds it out.

/// Whether `wirebridge serve` accepts the settings file at `path` (its keys,
/// and their types). Loading is stopped before anything is served by an
/// upstream URL that cannot be used: `--upstream` is read after the file, so
/// a file that loads ends with that error, and a file that does not ends
/// with its own.
fn accepts_settings_file(path: &Path) -> Result<(), String> {
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
fn binary_variables() -> BTreeSet<String> {
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
fn harness_variables() -> BTreeSet<String> {
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

/// Each subcommand of `wirebridge --help`, with the flags its own `--help`
/// lists.
fn flags_by_subcommand() -> BTreeMap<String, BTreeSet<String>> {
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
fn wirebridge(args: &[&str]) -> Output {
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

/// README.md, then every page under `docs/`, by path.
fn pages() -> Vec<Page> {
    let root = root();
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = files(&root.join("docs"))
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| Page {
            text: std::fs::read_to_string(&path).expect("a page"),
            path: relative(&root, &path),
        })
        .collect()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Every file under `path` (or `path` itself), skipping installed packages.
fn files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(path) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if ["node_modules", "__pycache__", ".venv"].contains(&&*name.to_string_lossy()) {
            continue;
        }
        found.extend(files(&path));
    }
    found
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .expect("under the root")
        .to_string_lossy()
        .replace('\\', "/")
}

struct Page {
    /// From the repository root, with `/`.
    path: String,
    text: String,
}

impl Page {
    fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.path)
    }

    /// Headings, fenced code blocks, and paragraphs (with tables and list
    /// items), in order.
    fn blocks(&self) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut lines = self.text.lines().enumerate().peekable();
        while let Some((index, line)) = lines.next() {
            let trimmed = line.trim_start();
            if let Some(info) = trimmed.strip_prefix("```") {
                let indent = &line[..line.len() - trimmed.len()];
                let mut body = Vec::new();
                for (_, line) in lines.by_ref() {
                    if line.trim_start().starts_with("```") {
                        break;
                    }
                    body.push(line.strip_prefix(indent).unwrap_or(line));
                }
                blocks.push(Block {
                    line: index + 2,
                    kind: Kind::Code(info.trim().to_owned()),
                    text: body.join("\n"),
                });
            } else if is_heading(trimmed) {
                blocks.push(Block {
                    line: index + 1,
                    kind: Kind::Heading,
                    text: trimmed.to_owned(),
                });
            } else if !trimmed.is_empty() {
                let mut paragraph = vec![line];
                while let Some((_, next)) = lines.peek() {
                    let next = next.trim_start();
                    if next.is_empty() || next.starts_with("```") || is_heading(next) {
                        break;
                    }
                    paragraph.push(lines.next().expect("peeked").1);
                }
                blocks.push(Block {
                    line: index + 1,
                    kind: Kind::Prose,
                    text: paragraph.join("\n"),
                });
            }
        }
        blocks
    }

    /// The anchors of the page's headings, as GitHub makes them.
    fn anchors(&self) -> BTreeSet<String> {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let mut anchors = BTreeSet::new();
        for block in self.blocks() {
            if block.kind != Kind::Heading {
                continue;
            }
            let slug = slug(&block.text);
            let count = seen.entry(slug.clone()).or_default();
            anchors.insert(match *count {
                0 => slug,
                n => format!("{slug}-{n}"),
            });
            *count += 1;
        }
        anchors
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Heading,
    /// A fenced code block, with its language.
    Code(String),
    Prose,
}

struct Block {
    /// The line its text starts on, from 1.
    line: usize,
    kind: Kind,
    text: String,
}

impl Block {
    fn line_of(&self, offset: usize) -> usize {
        self.line + self.text[..offset].matches('\n').count()
    }
}

fn is_heading(line: &str) -> bool {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// GitHub's anchor for a heading: its text without markup, lowercased,
/// spaces made `-`, and punctuation other than `-` and `_` removed.
fn slug(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .chars()
        .filter(|c| *c != '`' && *c != '*')
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// A paragraph's inline code spans (each with its offset and its text, line
/// breaks read as spaces), and the paragraph with the spans blanked out.
fn code_spans(text: &str) -> (Vec<(usize, String)>, String) {
    let bytes = text.as_bytes();
    let run = |from: usize| bytes[from..].iter().take_while(|b| **b == b'`').count();
    let mut spans = Vec::new();
    let mut outside = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let ticks = run(i);
        let mut j = i + ticks;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let r = run(j);
                if r == ticks {
                    close = Some(j);
                    break;
                }
                j += r;
            } else {
                j += 1;
            }
        }
        let Some(close) = close else {
            i += ticks;
            continue;
        };
        let span = text[i + ticks..close].replace('\n', " ");
        spans.push((i + ticks, span.trim().to_owned()));
        for byte in &mut outside[i..close + ticks] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        i = close + ticks;
    }
    let outside = String::from_utf8(outside).expect("only whole characters are blanked");
    (spans, outside)
}

/// The targets of a paragraph's inline links, with their offsets.
fn links(outside: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = outside[from..].find("](") {
        let start = from + at + 2;
        let Some(length) = outside[start..].find(')') else {
            break;
        };
        let target = outside[start..start + length].split_whitespace().next();
        found.push((start, target.unwrap_or_default().to_owned()));
        from = start + length;
    }
    found
}

/// Checks a link from `page`: web links are left alone.
fn resolve_link(page: &Page, target: &str) -> Result<(), String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let root = root();
    let file = if path.is_empty() {
        root.join(&page.path)
    } else {
        let dir = Path::new(&page.path).parent().unwrap_or(Path::new(""));
        root.join(dir).join(path)
    };
    if !file.exists() {
        return Err("no such file".into());
    }
    if anchor.is_empty() {
        return Ok(());
    }
    let file = file.canonicalize().expect("an existing file");
    let text = std::fs::read_to_string(&file).map_err(|_| "not a page".to_owned())?;
    let target = Page {
        path: relative(&root, &file),
        text,
    };
    if target.anchors().contains(anchor) {
        Ok(())
    } else {
        Err(format!("no heading of {} has the anchor", target.path))
    }
}

/// The lines of a code block as commands: a line ending in `\`, or followed
/// by an indented one, goes on; each with its index in the block.
fn logical_lines(code: &str) -> Vec<(usize, String)> {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut continued = false;
    for (index, line) in code.lines().enumerate() {
        let text = line.trim().trim_end_matches('\\');
        match found.last_mut() {
            Some((_, last)) if continued || line.starts_with([' ', '\t']) => {
                last.push(' ');
                last.push_str(text);
            }
            _ => found.push((index, text.to_owned())),
        }
        continued = line.trim_end().ends_with('\\');
    }
    found
}

/// Checks each `wirebridge SUBCOMMAND … --flag` in `line` against the flags
/// of the subcommand; whether there was one.
fn check_commands(
    line: &str,
    flags: &BTreeMap<String, BTreeSet<String>>,
    at: &str,
    problems: &mut Vec<String>,
) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut found = false;
    let mut i = 0;
    while i < words.len() {
        let program = bare(words[i]);
        let subcommand = words.get(i + 1).map(|word| bare(word));
        let known = subcommand.and_then(|name| flags.get(name).map(|flags| (name, flags)));
        let Some((subcommand, known)) =
            known.filter(|_| program == "wirebridge" || program.ends_with("/wirebridge"))
        else {
            i += 1;
            continue;
        };
        found = true;
        i += 2;
        while let Some(word) = words.get(i) {
            if word.starts_with('#') || ["|", "||", "&&", ";"].contains(word) {
                break;
            }
            if let Some(name) = flag(word) {
                if !known.contains(&name) {
                    problems.push(format!(
                        "{at}: `wirebridge {subcommand} --{name}`: \
                         `wirebridge {subcommand} --help` lists no such flag"
                    ));
                }
            }
            i += 1;
            if word.ends_with([')', ';']) {
                break;
            }
        }
    }
    found
}

/// Checks that every `--flag` in `text` is one of `serve`'s.
fn check_serve_flags(text: &str, serve: &BTreeSet<String>, at: &str, problems: &mut Vec<String>) {
    for name in text.split_whitespace().filter_map(flag) {
        if !serve.contains(&name) {
            problems.push(format!(
                "{at}: `--{name}`: `wirebridge serve --help` lists no such flag"
            ));
        }
    }
}

/// A word as a program name: what follows `=`, `(` or a quote, without
/// closing punctuation.
fn bare(word: &str) -> &str {
    word.rsplit(['=', '(', '`', '"', '\''])
        .find(|part| !part.is_empty())
        .unwrap_or_default()
        .trim_end_matches([')', ';', ',', '.', ':', '`', '"', '\''])
}

/// The flag a word names, if it is one: `--name`, `[--name`, `--name=…`.
fn flag(word: &str) -> Option<String> {
    let name = word
        .trim_start_matches(['[', '(', '`'])
        .strip_prefix("--")?;
    let name: String = name
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .collect();
    name.starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(name)
}

/// The `WIREBRIDGE_*` names in a page, with their offsets (not the pattern
/// `WIREBRIDGE_*` itself).
fn variables(text: &str) -> Vec<(usize, String)> {
    text.match_indices("WIREBRIDGE_")
        .filter_map(|(offset, prefix)| {
            let rest = &text[offset + prefix.len()..];
            let tail: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            (!tail.is_empty()).then(|| (offset, format!("{prefix}{tail}")))
        })
        .collect()
}

/// The `WIREBRIDGE_*` names in source text that come right after one of
/// `openers` (a quote, a `$`): the ones it reads, not the ones it mentions.
fn read_variables(text: &str, openers: &[&str]) -> Vec<String> {
    variables(text)
        .into_iter()
        .filter(|(offset, _)| openers.iter().any(|o| text[..*offset].ends_with(o)))
        .map(|(_, name)| name)
        .collect()
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A word that names a path in the repository, without quotes or closing
/// punctuation; none for a placeholder such as `fuzz/artifacts/TARGET/`.
fn repository_path(word: &str) -> Option<&str> {
    let path = word
        .trim_start_matches(['`', '"', '\'', '(', '['])
        .trim_end_matches(['`', '"', '\'', ')', ']', ',', '.', ';', ':']);
    if !REPOSITORY_DIRS.iter().any(|dir| path.starts_with(dir)) {
        return None;
    }
    let placeholder = path.contains(['<', '>', '{', '}', '*', '$', '…'])
        || path.split('/').any(|part| {
            part.chars().any(|c| c.is_ascii_uppercase())
                && part
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
    (!placeholder).then_some(path)
}

/// A `toml` block for Codex's `~/.codex/config.toml`, not for the bridge.
fn is_codex_config(toml: &str) -> bool {
    toml.lines()
        .any(|line| line.trim_start().starts_with("[model_providers"))
}

fn scratch_dir() -> PathBuf {
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

fn report(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "the documentation is wrong about {what}:\n{}",
        problems.join("\n")
    );
}
