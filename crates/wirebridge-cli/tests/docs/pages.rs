//! Reading the pages: their links, code, headings and the items they name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::*;

/// README.md, then every page under `docs/`, by path.
pub(crate) fn pages() -> Vec<Page> {
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

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Every file under `path` (or `path` itself), skipping installed packages.
pub(crate) fn files(path: &Path) -> Vec<PathBuf> {
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

pub(crate) fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .expect("under the root")
        .to_string_lossy()
        .replace('\\', "/")
}

pub(crate) struct Page {
    /// From the repository root, with `/`.
    pub(crate) path: String,
    pub(crate) text: String,
}

impl Page {
    pub(crate) fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.path)
    }

    /// Headings, fenced code blocks, and paragraphs (with tables and list
    /// items), in order.
    pub(crate) fn blocks(&self) -> Vec<Block> {
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
    pub(crate) fn anchors(&self) -> BTreeSet<String> {
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
pub(crate) enum Kind {
    Heading,
    /// A fenced code block, with its language.
    Code(String),
    Prose,
}

pub(crate) struct Block {
    /// The line its text starts on, from 1.
    pub(crate) line: usize,
    pub(crate) kind: Kind,
    pub(crate) text: String,
}

impl Block {
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.line + self.text[..offset].matches('\n').count()
    }
}

pub(crate) fn is_heading(line: &str) -> bool {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// GitHub's anchor for a heading: its text without markup, lowercased,
/// spaces made `-`, and punctuation other than `-` and `_` removed.
pub(crate) fn slug(heading: &str) -> String {
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
pub(crate) fn code_spans(text: &str) -> (Vec<(usize, String)>, String) {
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
pub(crate) fn links(outside: &str) -> Vec<(usize, String)> {
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
pub(crate) fn resolve_link(page: &Page, target: &str) -> Result<(), String> {
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
pub(crate) fn logical_lines(code: &str) -> Vec<(usize, String)> {
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

/// The usage block of a page: its first code block that shows
/// `wirebridge SUBCOMMAND` commands, each subcommand with the line it starts
/// on and the flags shown for it (`[--a|--b]` shows both).
pub(crate) fn usage(page: &Page) -> BTreeMap<String, (usize, BTreeSet<String>)> {
    for block in page.blocks() {
        if !matches!(block.kind, Kind::Code(_)) {
            continue;
        }
        let mut found = BTreeMap::new();
        for (index, line) in logical_lines(&block.text) {
            let words: Vec<&str> = line
                .split(|c: char| c.is_whitespace() || c == '|')
                .filter(|word| !word.is_empty())
                .collect();
            if let [program, subcommand, rest @ ..] = words.as_slice() {
                if *program == "wirebridge" {
                    let flags = rest.iter().filter_map(|word| flag(word)).collect();
                    found.insert((*subcommand).to_owned(), (block.line + index, flags));
                }
            }
        }
        if !found.is_empty() {
            return found;
        }
    }
    BTreeMap::new()
}

/// One row of the settings table.
pub(crate) struct SettingRow {
    pub(crate) line: usize,
    /// The file key.
    pub(crate) key: String,
    /// Its first flag, if it has one.
    pub(crate) flag: Option<String>,
    /// The default, as the page gives it.
    pub(crate) default: String,
}

/// The rows of a page's settings table, the one headed
/// `| file key | flag | environment | default |`.
pub(crate) fn settings_table(page: &Page) -> Vec<SettingRow> {
    let cells = |line: &str| -> Vec<String> {
        let line = line.trim().trim_start_matches('|').trim_end_matches('|');
        line.split('|').map(|cell| cell.trim().to_owned()).collect()
    };
    for block in page.blocks() {
        let mut lines = block.text.lines().enumerate();
        let header = lines
            .next()
            .map(|(_, line)| cells(line))
            .unwrap_or_default();
        if block.kind != Kind::Prose || header != ["file key", "flag", "environment", "default"] {
            continue;
        }
        return lines
            .skip(1) // |---|---|…
            .map(|(index, line)| {
                let row = cells(line);
                SettingRow {
                    line: block.line + index,
                    key: row[0].trim_matches('`').to_owned(),
                    flag: row[1].split_whitespace().find_map(flag),
                    default: row[3].clone(),
                }
            })
            .collect();
    }
    Vec::new()
}

/// Whether a table cell gives `default`: the cell, its code marks left
/// out, is the default, or the default and then a remark (` (bytes)`,
/// `, or …`, `: …`).
pub(crate) fn gives_default(cell: &str, default: &str) -> bool {
    let plain = cell.replace('`', "");
    plain
        .strip_prefix(default)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ',', ':', ';']))
}

/// Checks each `wirebridge SUBCOMMAND … --flag` in `line` against the flags
/// of the subcommand; whether there was one.
pub(crate) fn check_commands(
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
pub(crate) fn check_serve_flags(
    text: &str,
    serve: &BTreeSet<String>,
    at: &str,
    problems: &mut Vec<String>,
) {
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
pub(crate) fn bare(word: &str) -> &str {
    word.rsplit(['=', '(', '`', '"', '\''])
        .find(|part| !part.is_empty())
        .unwrap_or_default()
        .trim_end_matches([')', ';', ',', '.', ':', '`', '"', '\''])
}

/// The flag a word names, if it is one: `--name`, `[--name`, `--name=…`.
pub(crate) fn flag(word: &str) -> Option<String> {
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
pub(crate) fn variables(text: &str) -> Vec<(usize, String)> {
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
pub(crate) fn read_variables(text: &str, openers: &[&str]) -> Vec<String> {
    variables(text)
        .into_iter()
        .filter(|(offset, _)| openers.iter().any(|o| text[..*offset].ends_with(o)))
        .map(|(_, name)| name)
        .collect()
}

pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A word that names a path in the repository, without quotes or closing
/// punctuation; none for a placeholder such as `fuzz/artifacts/TARGET/`.
pub(crate) fn repository_path(word: &str) -> Option<&str> {
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
