//! Backend profiles: what a Chat Completions server accepts and how it names
//! things. Profiles are data: built-ins cover common servers, and users can
//! define their own (every field has a default). A backend speaking
//! Anthropic's Messages API reads its own part, [`MessagesProfile`].

mod messages;

pub use messages::{MessagesProfile, DEFAULT_VERSION as DEFAULT_ANTHROPIC_VERSION};

use serde::{Deserialize, Serialize};

/// Where a backend puts reasoning text in Chat messages and deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// `reasoning_content` (vLLM, DeepSeek, llama.cpp, SGLang).
    ReasoningContent,
    /// `reasoning` (Ollama, OpenRouter).
    Reasoning,
}

/// Whether reasoning arrives inline in the content, between tags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkTags {
    /// Content is content.
    Off,
    /// A block at the very start of the content (after whitespace, if
    /// any) opened by `<think>` or `<reasoning>` and closed by the matching
    /// tag is reasoning, and so are blocks of the same tag right after it
    /// (gpt-oss on Bedrock wraps every reasoning chunk in its own pair);
    /// the rest is content, tags included. Servers without a reasoning
    /// parser write reasoning models' thinking so (DeepSeek-R1 on some
    /// hosts, Qwen3 on vLLM without `--reasoning-parser`, gpt-oss on
    /// Bedrock), and an answer rarely opens with such a tag.
    #[default]
    Leading,
    /// Text between `<think>` and `</think>` is reasoning, wherever it is.
    Tags,
    /// Reasoning until `</think>`: for chat templates that open the tag in
    /// the prompt, so the model's output starts inside it.
    StartsInside,
}

/// How Chat reasoning text is shown to a Responses client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningOutput {
    /// As summary parts when the request asks for a summary
    /// (`reasoning.summary`, as Codex does), else as reasoning text.
    #[default]
    Auto,
    /// As `reasoning_text` content (`response.reasoning_text.*` events): the
    /// model's raw reasoning, which is what Chat backends send.
    Text,
    /// As `summary_text` parts (`response.reasoning_summary_*` events), for
    /// clients that show only summaries (Codex, the Vercel AI SDK).
    Summary,
}

impl ReasoningOutput {
    /// The setting's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningOutput::Auto => "auto",
            ReasoningOutput::Text => "text",
            ReasoningOutput::Summary => "summary",
        }
    }
}

impl std::str::FromStr for ReasoningOutput {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ReasoningOutput::Auto),
            "text" => Ok(ReasoningOutput::Text),
            "summary" => Ok(ReasoningOutput::Summary),
            other => Err(format!(
                "unknown reasoning output '{other}' (expected auto, summary or text)"
            )),
        }
    }
}

/// Reasoning efforts in increasing order, as the Responses API names them.
pub const REASONING_EFFORTS: [&str; 7] =
    ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Which Chat field carries the token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI; required by its reasoning models).
    MaxCompletionTokens,
    /// `max_tokens` (understood by nearly every compatible server).
    MaxTokens,
}

/// Responses-only request fields that Chat can also carry. A profile lists
/// those its backend accepts; the others are dropped and reported.
pub const PASSTHROUGH_FIELDS: [&str; 8] = [
    "metadata",
    "store",
    "service_tier",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "user",
    "verbosity",
];

/// What a Chat Completions backend accepts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackendProfile {
    /// Profile name.
    pub name: String,
    /// Whether the backend accepts the `developer` role; if not, developer
    /// messages are sent as `system`.
    pub developer_role: bool,
    /// The token-limit field.
    pub max_tokens_field: MaxTokensField,
    /// Where the backend writes reasoning, and where replayed reasoning goes.
    pub reasoning_field: ReasoningField,
    /// Replay `reasoning` items of the history on the next assistant message.
    pub replay_reasoning: bool,
    /// Send text-only content as one string rather than a part array (some
    /// servers' chat templates accept only strings).
    pub text_parts_as_string: bool,
    /// Whether `web_search` tools can become `web_search_options`.
    pub web_search_options: bool,
    /// Whether `reasoning.effort` can be sent as `reasoning_effort`.
    pub reasoning_effort: bool,
    /// The `reasoning_effort` values the backend accepts; another value is
    /// sent as the nearest of these and reported.
    pub reasoning_efforts: Vec<String>,
    /// How its reasoning is shown to Responses clients.
    pub reasoning_output: ReasoningOutput,
    /// Whether to ask for a usage chunk with `stream_options.include_usage`.
    pub stream_usage: bool,
    /// Whether reasoning arrives inline in the content, between tags.
    pub think_tags: ThinkTags,
    /// Responses-only fields forwarded as-is (names from [`PASSTHROUGH_FIELDS`]).
    pub passthrough: Vec<String>,
    /// The backend's token-counting endpoint, a path after the prefix the
    /// Chat endpoint is called under (`/tokenize` is `/v1/tokenize` next
    /// to `/v1/chat/completions`), taking vLLM's chat form (`model`,
    /// `messages`) and answering a `count` or a `tokens` array. A
    /// `context_management` threshold is measured there; without one, or
    /// when it fails, estimated from the request's size
    /// ([`estimate_tokens`](crate::responses_to_chat::compaction::estimate_tokens)).
    pub tokenize: Option<String>,
    /// Whether the backend takes Chat's named `tool_choice` object
    /// (`{"type":"function","function":{"name":…}}`). Without it a named
    /// choice is sent as `"required"` with `tools` narrowed to the named
    /// tool, which forces the same call (llama.cpp's server reads only the
    /// string forms, and treats an object as `auto`).
    pub named_tool_choice: bool,
    /// Whether the backend's own Responses API keeps state (stored
    /// responses, `previous_response_id`, `/responses/compact`, WebSocket
    /// mode), as OpenAI's does. Responses clients of such a backend are
    /// passed through; for any other, the bridge keeps the state and sends
    /// the backend whole conversations.
    pub keeps_responses: bool,
    /// The backend's context window, in tokens, for `truncation: "auto"`:
    /// a conversation estimated above it loses its oldest turns. Unset, it
    /// is not known, and `truncation: "auto"` is reported as lost. The
    /// model catalog's `context_window` of a model wins over it
    /// ([`Options::catalog`](crate::responses_to_chat::Options::catalog)).
    pub context_window: Option<u64>,
    /// A request header the backend (or a router in front of it) keeps a
    /// session on, such as `x-session-affinity`: each upstream request of a
    /// conversation carries the same value in it, a digest of the
    /// conversation's key, never anything of the client's credentials.
    /// Unset, no such header is sent.
    pub session_header: Option<String>,
    /// What a Messages backend takes (read only with a Messages backend).
    pub messages: MessagesProfile,
}

impl Default for BackendProfile {
    fn default() -> Self {
        Self::generic()
    }
}

impl BackendProfile {
    /// The names of the built-in profiles.
    pub const BUILTIN: [&'static str; 8] = [
        "openai",
        "anthropic",
        "vllm",
        "llama-cpp",
        "ollama",
        "deepseek",
        "openrouter",
        "generic",
    ];

    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Self> {
        Some(match name {
            "openai" => Self::openai(),
            "anthropic" => Self::anthropic(),
            "vllm" => Self::vllm(),
            "llama-cpp" | "llama.cpp" | "llamacpp" => Self::llama_cpp(),
            "ollama" => Self::ollama(),
            "deepseek" => Self::deepseek(),
            "openrouter" => Self::openrouter(),
            "generic" => Self::generic(),
            _ => return None,
        })
    }

    /// Any OpenAI-compatible server: the most conservative choices.
    pub fn generic() -> Self {
        Self {
            name: "generic".into(),
            developer_role: false,
            max_tokens_field: MaxTokensField::MaxTokens,
            reasoning_field: ReasoningField::ReasoningContent,
            replay_reasoning: false,
            text_parts_as_string: true,
            web_search_options: false,
            reasoning_effort: false,
            reasoning_efforts: efforts(&["low", "medium", "high"]),
            reasoning_output: ReasoningOutput::Auto,
            stream_usage: true,
            think_tags: ThinkTags::Leading,
            passthrough: vec!["user".into()],
            tokenize: None,
            named_tool_choice: false,
            keeps_responses: false,
            context_window: None,
            session_header: None,
            messages: MessagesProfile::default(),
        }
    }

    /// OpenAI's own Chat Completions.
    pub fn openai() -> Self {
        Self {
            name: "openai".into(),
            // Its models' reasoning never reaches the content: an answer
            // that opens with a tag is the answer.
            think_tags: ThinkTags::Off,
            developer_role: true,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            text_parts_as_string: false,
            web_search_options: true,
            reasoning_effort: true,
            reasoning_efforts: efforts(&["none", "minimal", "low", "medium", "high", "xhigh"]),
            passthrough: PASSTHROUGH_FIELDS.iter().map(|s| s.to_string()).collect(),
            named_tool_choice: true,
            keeps_responses: true,
            ..Self::generic()
        }
    }

    /// Anthropic's Messages API (and the Messages endpoints of Claude on
    /// other clouds): the key sent as `x-api-key`, cache breakpoints marked.
    pub fn anthropic() -> Self {
        Self {
            name: "anthropic".into(),
            messages: MessagesProfile::anthropic(),
            ..Self::generic()
        }
    }

    /// vLLM's OpenAI-compatible server.
    pub fn vllm() -> Self {
        Self {
            name: "vllm".into(),
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            text_parts_as_string: false,
            reasoning_effort: true,
            named_tool_choice: true,
            ..Self::generic()
        }
    }

    /// llama.cpp's `llama-server`.
    pub fn llama_cpp() -> Self {
        Self {
            name: "llama-cpp".into(),
            ..Self::generic()
        }
    }

    /// Ollama's OpenAI-compatible endpoint.
    pub fn ollama() -> Self {
        Self {
            name: "ollama".into(),
            reasoning_field: ReasoningField::Reasoning,
            reasoning_effort: true,
            ..Self::generic()
        }
    }

    /// DeepSeek's API (it rejects `reasoning_content` in input messages, so
    /// reasoning is never replayed).
    pub fn deepseek() -> Self {
        Self {
            name: "deepseek".into(),
            named_tool_choice: true,
            ..Self::generic()
        }
    }

    /// OpenRouter.
    pub fn openrouter() -> Self {
        Self {
            name: "openrouter".into(),
            developer_role: true,
            reasoning_field: ReasoningField::Reasoning,
            reasoning_effort: true,
            reasoning_efforts: efforts(&["minimal", "low", "medium", "high"]),
            web_search_options: true,
            passthrough: vec!["user".into(), "metadata".into()],
            named_tool_choice: true,
            ..Self::generic()
        }
    }

    /// Whether a Responses-only field is forwarded as-is.
    pub fn passes(&self, field: &str) -> bool {
        self.passthrough.iter().any(|f| f == field)
    }

    /// The effort to send for a requested one: itself when the backend
    /// accepts it, else the accepted effort nearest to it (the lower of two
    /// as near; a value this bridge does not know ranks above `max`). `None`
    /// when nothing is accepted, or the request asked for what is sent.
    pub fn clamp_effort<'e>(&'e self, requested: &str) -> Option<&'e str> {
        if self.reasoning_efforts.is_empty()
            || self.reasoning_efforts.iter().any(|e| e == requested)
        {
            return None;
        }
        let rank = |effort: &str| {
            REASONING_EFFORTS
                .iter()
                .position(|e| *e == effort)
                .unwrap_or(REASONING_EFFORTS.len())
        };
        let wanted = rank(requested);
        self.reasoning_efforts
            .iter()
            .min_by_key(|e| {
                let r = rank(e);
                (r.abs_diff(wanted), r)
            })
            .map(String::as_str)
    }
}

fn efforts(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_resolve_and_custom_profiles_parse() {
        for name in BackendProfile::BUILTIN {
            assert_eq!(BackendProfile::builtin(name).unwrap().name, name);
        }
        let custom: BackendProfile = serde_json::from_str(
            r#"{"name":"mine","developer_role":true,"reasoning_field":"reasoning"}"#,
        )
        .unwrap();
        assert!(custom.developer_role);
        assert_eq!(custom.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(serde_json::from_str::<BackendProfile>(r#"{"developer":true}"#).is_err());
    }

    #[test]
    fn leading_reasoning_blocks_are_split_but_on_openai() {
        for name in BackendProfile::BUILTIN {
            let expected = match name {
                "openai" => ThinkTags::Off,
                _ => ThinkTags::Leading,
            };
            assert_eq!(BackendProfile::builtin(name).unwrap().think_tags, expected);
        }
        let custom: BackendProfile = serde_json::from_str(r#"{"name":"mine"}"#).unwrap();
        assert_eq!(custom.think_tags, ThinkTags::Leading);
        for (value, mode) in [
            ("off", ThinkTags::Off),
            ("leading", ThinkTags::Leading),
            ("tags", ThinkTags::Tags),
            ("starts_inside", ThinkTags::StartsInside),
        ] {
            let json = format!(r#"{{"think_tags":"{value}"}}"#);
            let profile: BackendProfile = serde_json::from_str(&json).unwrap();
            assert_eq!(profile.think_tags, mode, "{value}");
        }
    }

    #[test]
    fn efforts_clamp_to_the_nearest_accepted() {
        let vllm = BackendProfile::vllm();
        assert_eq!(vllm.clamp_effort("medium"), None);
        assert_eq!(vllm.clamp_effort("xhigh"), Some("high"));
        assert_eq!(vllm.clamp_effort("max"), Some("high"));
        assert_eq!(vllm.clamp_effort("ultra"), Some("high"));
        assert_eq!(vllm.clamp_effort("minimal"), Some("low"));
        assert_eq!(vllm.clamp_effort("none"), Some("low"));
        let openai = BackendProfile::openai();
        assert_eq!(openai.clamp_effort("none"), None);
        assert_eq!(openai.clamp_effort("max"), Some("xhigh"));
        let open = BackendProfile {
            reasoning_efforts: Vec::new(),
            ..BackendProfile::vllm()
        };
        assert_eq!(open.clamp_effort("anything"), None);
    }
}
