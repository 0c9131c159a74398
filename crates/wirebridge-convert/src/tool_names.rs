//! Chat function names for Responses tools Chat cannot express directly, and
//! the way back.
//!
//! Chat has one flat list of functions. Responses also has namespaces (tools
//! grouped under a name), custom tools (freeform text input) and a
//! client-executed tool search. All become plain functions on the way to a
//! Chat backend; this map remembers what each function really was so the
//! backend's calls are restored.

/// The kind of tool a Chat function stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// A function, called with JSON arguments.
    #[default]
    Function,
    /// A custom tool taking free-form text, offered as a function taking
    /// `{"input": string}`; its calls become `custom_tool_call` items.
    Custom,
    /// The client-executed `tool_search` tool; its calls become
    /// `tool_search_call` items.
    ToolSearch,
}

/// What a Chat function stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolOrigin {
    /// The name the client gave the tool.
    pub name: String,
    /// The namespace it belongs to, if any.
    pub namespace: Option<String>,
    /// What kind of tool it is.
    pub kind: ToolKind,
}

impl ToolOrigin {
    /// Whether it is a custom tool taking free-form text.
    pub fn is_custom(&self) -> bool {
        self.kind == ToolKind::Custom
    }
}

/// Maps Chat function names to the tools they stand for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ToolNameMap {
    entries: Vec<(String, ToolOrigin)>,
}

/// Longest function name OpenAI-compatible servers accept.
const MAX_NAME: usize = 64;

impl ToolNameMap {
    /// Registers a tool and returns the Chat function name to use for it.
    ///
    /// Plain functions keep their name. Namespaced tools become
    /// `namespace__name`, shortened and numbered when needed so every name is
    /// unique, at most 64 characters, and made of `[A-Za-z0-9_-]`.
    pub fn register(&mut self, origin: ToolOrigin) -> String {
        let base = match &origin.namespace {
            Some(ns) => format!("{}__{}", sanitize(ns), sanitize(&origin.name)),
            None => sanitize(&origin.name),
        };
        let mut candidate = truncate(&base, MAX_NAME);
        let mut n = 2;
        while self.entries.iter().any(|(name, _)| *name == candidate) {
            let suffix = format!("_{n}");
            candidate = format!("{}{suffix}", truncate(&base, MAX_NAME - suffix.len()));
            n += 1;
        }
        self.entries.push((candidate.clone(), origin));
        candidate
    }

    /// The tool a Chat function name stands for, if it is not a plain
    /// function under its own name.
    pub fn origin(&self, chat_name: &str) -> Option<&ToolOrigin> {
        self.entries
            .iter()
            .find(|(name, _)| name == chat_name)
            .map(|(_, origin)| origin)
            .filter(|o| {
                o.kind != ToolKind::Function || o.namespace.is_some() || o.name != chat_name
            })
    }

    /// The Chat name of a tool, by its client-side name and namespace.
    pub fn chat_name(&self, name: &str, namespace: Option<&str>) -> Option<&str> {
        self.entries
            .iter()
            .find(|(_, o)| o.name == name && o.namespace.as_deref() == namespace)
            .or_else(|| self.entries.iter().find(|(_, o)| o.name == name))
            .map(|(chat, _)| chat.as_str())
    }

    /// Whether a tool of this Chat name was registered.
    pub fn contains(&self, chat_name: &str) -> bool {
        self.entries.iter().any(|(name, _)| name == chat_name)
    }

    /// Whether no tool was registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn sanitize(name: &str) -> String {
    // Most names need nothing replaced: one copy, not a character at a time.
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return name.to_owned();
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn truncate(s: &str, max: usize) -> String {
    // No more bytes than `max`: no more characters either.
    if s.len() <= max {
        return s.to_owned();
    }
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_copied_whole_are_what_the_character_walk_gives() {
        let walk = |name: &str| -> String {
            name.chars()
                .map(|c| match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
                    _ => '_',
                })
                .collect()
        };
        let long = "a".repeat(70);
        let names = [
            "get_weather",
            "exec-command",
            "ns.v1",
            "café",
            "a b",
            "",
            &long,
        ];
        for name in names {
            assert_eq!(sanitize(name), walk(name), "{name}");
            for max in [0, 3, 5, 64] {
                let expected: String = name.chars().take(max).collect();
                assert_eq!(truncate(name, max), expected, "{name} at {max}");
            }
        }
    }

    fn origin(name: &str, ns: Option<&str>, custom: bool) -> ToolOrigin {
        ToolOrigin {
            name: name.into(),
            namespace: ns.map(Into::into),
            kind: if custom {
                ToolKind::Custom
            } else {
                ToolKind::Function
            },
        }
    }

    #[test]
    fn flattens_and_restores() {
        let mut map = ToolNameMap::default();
        assert_eq!(map.register(origin("exec", None, false)), "exec");
        let flat = map.register(origin("close_agent", Some("multi_agent_v1"), false));
        assert_eq!(flat, "multi_agent_v1__close_agent");
        assert_eq!(
            map.origin(&flat).unwrap().namespace.as_deref(),
            Some("multi_agent_v1")
        );
        assert!(map.origin("exec").is_none());
        assert_eq!(
            map.chat_name("close_agent", Some("multi_agent_v1")),
            Some(flat.as_str())
        );
    }

    #[test]
    fn names_stay_unique_short_and_clean() {
        let mut map = ToolNameMap::default();
        let long = "x".repeat(80);
        let a = map.register(origin(&long, Some("ns.v1"), false));
        let b = map.register(origin(&long, Some("ns.v1"), false));
        assert!(a.len() <= 64 && b.len() <= 64 && a != b, "{a} {b}");
        assert!(a.starts_with("ns_v1__"));
        let c = map.register(origin("apply_patch", None, true));
        assert!(map.origin(&c).unwrap().is_custom());
    }
}
