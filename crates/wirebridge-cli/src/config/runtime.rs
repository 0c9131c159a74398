//! How many threads serve connections.

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
}
