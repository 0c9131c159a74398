//! Settings that are a count within bounds (connections, threads): read
//! from the environment, then the flag, then the file, and checked.

use super::{value, ConfigError};

/// A count setting's sources and bounds.
pub(super) struct Count<'a> {
    /// The setting's name in the file and in errors (`max_connections`).
    pub(super) key: &'a str,
    /// Its environment variable (`WIREBRIDGE_MAX_CONNECTIONS`).
    pub(super) env_var: &'a str,
    /// What it counts, for the error about a value that is not a number
    /// (`connections`).
    pub(super) noun: &'a str,
    /// The largest value allowed; the smallest is 1.
    pub(super) max: usize,
}

impl Count<'_> {
    /// The value: the environment's if set, else `flag_or_file`; `None`
    /// when neither is set.
    pub(super) fn load(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        flag_or_file: Option<usize>,
    ) -> Result<Option<usize>, ConfigError> {
        let count = match env(self.env_var) {
            Some(v) => Some(v.trim().parse::<usize>().map_err(|_| {
                value(
                    self.env_var,
                    "",
                    format!("'{v}' is not a number of {}", self.noun),
                )
            })?),
            None => flag_or_file,
        };
        if let Some(n) = count.filter(|n| !(1..=self.max).contains(n)) {
            return Err(value(
                self.key,
                "",
                format!("{n} is not between 1 and {}", self.max),
            ));
        }
        Ok(count)
    }
}
