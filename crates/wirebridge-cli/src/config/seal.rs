//! The keys reasoning and compaction carriers are sealed with: the
//! current one (`seal_key`, or one generated for this process) and earlier
//! ones still accepted during a rotation (`seal_previous_keys`).

use wirebridge_convert::seal::SealKey;

/// The seal keys: the current one, previous ones still accepted, and
/// whether the current one was generated for this process only.
#[derive(Debug, Clone)]
pub struct SealKeys {
    /// What new carriers are sealed with.
    pub current: SealKey,
    /// Also accepted when opening.
    pub previous: Vec<SealKey>,
    /// True when no key was set and `current` is this process's own.
    pub generated: bool,
}

impl SealKeys {
    /// The key set, or one generated for this process.
    pub(super) fn new(current: Option<SealKey>, previous: Vec<SealKey>) -> Self {
        let generated = current.is_none();
        Self {
            current: current.unwrap_or_else(SealKey::generate),
            previous,
            generated,
        }
    }
}
