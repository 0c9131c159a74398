//! The keys reasoning and compaction carriers are sealed with: the
//! current one (`seal_key`, or one generated for this process) and earlier
//! ones still accepted during a rotation (`seal_previous_keys`).

use wirebridge_convert::seal::{KeyError, SealKey};

use super::{pick, value, ConfigError, FileConfig, Origin};

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
    /// The environment, then the file.
    pub(super) fn load(
        file: &FileConfig,
        env: &dyn Fn(&str) -> Option<String>,
        origin: &Origin<'_>,
    ) -> Result<Self, ConfigError> {
        let (seal_key, seal_at) = pick(env("WIREBRIDGE_SEAL_KEY"), None, &file.seal_key, origin);
        let seal = match seal_key {
            // The message never repeats the key.
            Some(text) => SealKeys {
                current: text
                    .parse()
                    .map_err(|e: KeyError| value("seal_key", &seal_at, e.to_string()))?,
                previous: Vec::new(),
                generated: false,
            },
            None => SealKeys {
                current: SealKey::generate(),
                previous: Vec::new(),
                generated: true,
            },
        };
        let previous: Vec<(String, String)> = match env("WIREBRIDGE_SEAL_PREVIOUS_KEYS") {
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| (k.to_owned(), " (environment)".to_owned()))
                .collect(),
            None => file
                .seal_previous_keys
                .iter()
                .map(|k| (k.get_ref().clone(), origin.at(Some(k.span()))))
                .collect(),
        };
        let seal = SealKeys {
            previous: previous
                .into_iter()
                .map(|(text, at)| {
                    text.parse()
                        .map_err(|e: KeyError| value("seal_previous_keys", &at, e.to_string()))
                })
                .collect::<Result<_, _>>()?,
            ..seal
        };
        Ok(seal)
    }
}
