//! How connections are spread over threads: one multi-thread runtime, or a
//! current-thread runtime per core with a listener of its own.

use serde::Deserialize;

use super::count::Count;
use super::{value, ConfigError, FileConfig, Origin, ServeFlags};

/// The most worker threads a setting may ask for.
const MAX_WORKERS: usize = 1024;

/// Which runtime serves connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeFlavor {
    /// One Tokio multi-thread runtime: one listener, connections spread
    /// over its worker threads, which steal work from each other.
    MultiThread,
    /// A Tokio current-thread runtime per worker thread, each with a
    /// listener of its own on the same address (`SO_REUSEPORT`): the kernel
    /// spreads connections over them, and a connection stays on the thread
    /// that accepted it. Linux only.
    PerCore,
}

impl RuntimeFlavor {
    /// The name the settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeFlavor::MultiThread => "multi-thread",
            RuntimeFlavor::PerCore => "per-core",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "multi-thread" => Some(RuntimeFlavor::MultiThread),
            "per-core" => Some(RuntimeFlavor::PerCore),
            _ => None,
        }
    }
}

/// The runtime settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// Which runtime serves connections.
    pub flavor: RuntimeFlavor,
    /// Threads serving connections; `None` is one per core.
    pub workers: Option<usize>,
}

impl RuntimeSettings {
    /// Threads serving connections: the setting, or one per core the
    /// process may use.
    pub fn workers(&self) -> usize {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }

    /// Each setting: the environment, then the flag, then the file.
    pub(super) fn load(
        file: &FileConfig,
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
        origin: &Origin<'_>,
    ) -> Result<Self, ConfigError> {
        let (flavor, at) = match (env("WIREBRIDGE_RUNTIME"), flags.runtime, &file.runtime) {
            (Some(text), _, _) => (
                RuntimeFlavor::parse(&text)
                    .ok_or_else(|| unknown("WIREBRIDGE_RUNTIME", "", &text))?,
                " (environment)".to_owned(),
            ),
            (None, Some(flavor), _) => (flavor, String::new()),
            (None, None, Some(spanned)) => {
                let at = origin.at(Some(spanned.span()));
                let text = spanned.get_ref();
                let flavor =
                    RuntimeFlavor::parse(text).ok_or_else(|| unknown("runtime", &at, text))?;
                (flavor, at)
            }
            (None, None, None) => (RuntimeFlavor::MultiThread, String::new()),
        };
        if flavor == RuntimeFlavor::PerCore && !cfg!(target_os = "linux") {
            // Elsewhere SO_REUSEPORT either does not spread connections
            // (the last socket bound takes them all) or is spelt otherwise:
            // a per-core runtime would serve on one thread, or not at all.
            return Err(value(
                "runtime",
                &at,
                "per-core needs the kernel to spread connections over listeners sharing a port \
                 (SO_REUSEPORT), which only Linux does; use multi-thread",
            ));
        }
        let workers = Count {
            key: "workers",
            env_var: "WIREBRIDGE_WORKERS",
            noun: "threads",
            max: MAX_WORKERS,
        }
        .load(env, flags.workers.or(file.workers))?;
        Ok(Self { flavor, workers })
    }
}

fn unknown(key: &str, at: &str, text: &str) -> ConfigError {
    value(
        key,
        at,
        format!("'{}' is not multi-thread or per-core", text.trim()),
    )
}
