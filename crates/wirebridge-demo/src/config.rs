//! What the demo upstream serves and how: [`DemoConfig`], [`Api`], [`Clock`].

use crate::replay::ReplayError;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The model name used when a request names none, and listed by `GET /v1/models`.
pub const DEFAULT_MODEL: &str = "wirebridge-demo";

/// The timestamp of [`Clock::Fixed`] in the default configuration
/// (2026-01-01T00:00:00Z), so that the same request always gets the same bytes.
pub const DEFAULT_CREATED: u64 = 1_767_225_600;

/// Which API(s) the demo upstream speaks: OpenAI's Chat Completions and
/// Responses, Anthropic's Messages.
///
/// A request to an endpoint of an API that is not served gets the 404 the
/// server of that API sends for an unknown URL, so a proxy can be tested
/// against a Chat-only, a Responses-only or a Messages-only upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Api {
    /// Only `POST …/chat/completions`.
    Chat,
    /// Only `POST …/responses`.
    Responses,
    /// The two OpenAI endpoints, Chat and Responses (the default).
    #[default]
    Both,
    /// Only Anthropic's `POST …/messages` and `POST …/messages/count_tokens`.
    Messages,
    /// Every endpoint: Chat, Responses and Messages.
    All,
}

impl Api {
    /// Whether `POST …/chat/completions` is served.
    pub fn serves_chat(self) -> bool {
        matches!(self, Api::Chat | Api::Both | Api::All)
    }

    /// Whether `POST …/responses` is served.
    pub fn serves_responses(self) -> bool {
        matches!(self, Api::Responses | Api::Both | Api::All)
    }

    /// Whether `POST …/messages` and `POST …/messages/count_tokens` are served.
    pub fn serves_messages(self) -> bool {
        matches!(self, Api::Messages | Api::All)
    }

    /// The lower-case name: `chat`, `responses`, `both`, `messages` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Both => "both",
            Api::Messages => "messages",
            Api::All => "all",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an [`Api`] from a string other than `chat`,
/// `responses`, `both`, `messages` or `all`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown API `{0}`: expected `chat`, `responses`, `both`, `messages` or `all`")]
pub struct ParseApiError(pub String);

impl FromStr for Api {
    type Err = ParseApiError;

    /// Parses `chat`, `responses`, `both`, `messages` or `all` (ASCII
    /// case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "chat" => Ok(Api::Chat),
            "responses" => Ok(Api::Responses),
            "both" => Ok(Api::Both),
            "messages" => Ok(Api::Messages),
            "all" => Ok(Api::All),
            _ => Err(ParseApiError(s.to_string())),
        }
    }
}

/// Where the `created` / `created_at` timestamps of generated answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Clock {
    /// Always this Unix time in seconds: the output depends on the request only.
    Fixed(u64),
    /// The current system time.
    System,
}

impl Clock {
    /// The Unix time in seconds this clock reads now.
    pub fn now(self) -> u64 {
        match self {
            Clock::Fixed(t) => t,
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::Fixed(DEFAULT_CREATED)
    }
}

/// Configuration of the demo upstream.
///
/// Build it from [`DemoConfig::default`] (or [`DemoConfig::new`]) with the
/// builder methods; the fields are public for reading and tweaking.
///
/// ```
/// use std::time::Duration;
/// use wirebridge_demo::{Api, DemoConfig};
///
/// let config = DemoConfig::new()
///     .api(Api::Chat)
///     .chunk_delay(Duration::from_millis(20))
///     .model("my-model");
/// assert_eq!(config.api, Api::Chat);
/// assert!(config.replay.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DemoConfig {
    /// The API(s) served. Default: [`Api::Both`].
    pub api: Api,
    /// When set, every generation request is answered with this recorded
    /// file instead of a scripted answer (see the crate docs). Default: none.
    pub replay: Option<PathBuf>,
    /// Pause between two streamed chunks. Default: zero (as fast as the
    /// connection takes them). `demo:slow N` in a request overrides it.
    pub chunk_delay: Duration,
    /// Model name echoed when a request names none, and listed by
    /// `GET /v1/models`. Default: [`DEFAULT_MODEL`].
    pub model: String,
    /// Source of timestamps. Default: [`Clock::Fixed`]`(`[`DEFAULT_CREATED`]`)`.
    pub clock: Clock,
    /// Largest accepted request body; larger ones get a 413. Default: 16 MiB.
    pub max_request_bytes: usize,
    /// How long [`serve`](crate::serve) waits for open connections to finish
    /// after the shutdown signal before dropping them. Default: 10 s.
    pub shutdown_grace: Duration,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            api: Api::Both,
            replay: None,
            chunk_delay: Duration::ZERO,
            model: DEFAULT_MODEL.to_string(),
            clock: Clock::default(),
            max_request_bytes: 16 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

impl DemoConfig {
    /// The default configuration (same as [`DemoConfig::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Serve these API(s).
    pub fn api(mut self, api: Api) -> Self {
        self.api = api;
        self
    }

    /// Answer every generation request with this recorded file: an `.sse`
    /// file is sent byte for byte, a `*.chunks.txt` file (one JSON payload per
    /// line) is framed as SSE first, any other file is sent as is.
    pub fn replay(mut self, path: impl Into<PathBuf>) -> Self {
        self.replay = Some(path.into());
        self
    }

    /// Pause this long between two streamed chunks.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Use this model name when a request names none.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Take timestamps from this clock.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Reject request bodies larger than this many bytes with a 413.
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes;
        self
    }

    /// Wait at most this long for open connections when shutting down.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Check that the configuration can be served: the replay file, when
    /// set, can be read and framed. (The file is read again for every
    /// request, so that a server started with a good file reports a later
    /// problem as a 500.)
    pub fn validate(&self) -> Result<(), ReplayError> {
        match &self.replay {
            Some(path) => crate::replay::load(path).map(|_| ()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_parses_and_prints() {
        for api in [
            Api::Chat,
            Api::Responses,
            Api::Both,
            Api::Messages,
            Api::All,
        ] {
            assert_eq!(api.to_string().parse::<Api>(), Ok(api));
        }
        assert!(!Api::Both.serves_messages());
        assert!(Api::Messages.serves_messages() && !Api::Messages.serves_chat());
        assert!(
            Api::All.serves_chat() && Api::All.serves_responses() && Api::All.serves_messages()
        );
        assert_eq!("CHAT".parse::<Api>(), Ok(Api::Chat));
        let err = "grpc".parse::<Api>().unwrap_err();
        assert!(err.to_string().contains("`grpc`"));
    }

    #[test]
    fn default_clock_is_fixed() {
        assert_eq!(DemoConfig::default().clock.now(), DEFAULT_CREATED);
        assert!(Clock::System.now() > DEFAULT_CREATED / 2);
    }
}
