//! How many threads serve connections.

use super::count::Count;
use super::{value, ConfigError, FileConfig, Origin, ServeFlags};

/// The most worker threads a setting may ask for.
const MAX_WORKERS: usize = 1024;

/// The runtime settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSettings {
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
        // A file written for an older bridge may still choose a runtime:
        // say so, rather than calling the key unknown.
        if let Some(spanned) = &file.runtime {
            return Err(value(
                "runtime",
                &origin.at(Some(spanned.span())),
                "the setting was removed: connections are always served by one \
                 multi-thread runtime; remove the line (`workers` still sets its threads)",
            ));
        }
        let workers = Count {
            key: "workers",
            env_var: "WIREBRIDGE_WORKERS",
            noun: "threads",
            max: MAX_WORKERS,
        }
        .load(env, flags.workers.or(file.workers))?;
        Ok(Self { workers })
    }
}
