//! Summaries sealed into `encrypted_content`, and opened again.

use wirebridge_wire::raw::JsonStr;
use wirebridge_wire::responses::lenient::InputItem;

use super::super::Seal;
use crate::seal::{OpenError, Purpose, PREFIX};

impl Seal {
    /// Seals a summary for the client to carry.
    pub(crate) fn compaction(&self, summary: &str) -> String {
        self.sealer
            .seal(Purpose::Compaction, &self.scope, summary.as_bytes())
    }

    /// Opens a summary the client sent back.
    pub(crate) fn open_compaction(&self, sealed: &str) -> Result<String, OpenError> {
        let bytes = self.sealer.open(Purpose::Compaction, &self.scope, sealed)?;
        String::from_utf8(bytes).map_err(|_| OpenError::Unopenable)
    }
}

/// Why a compaction item stands for nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unread {
    /// It has no `encrypted_content` string.
    Missing,
    /// Its carrier does not open.
    Sealed(OpenError),
    /// The bridge has no key to open anything with.
    NoKey,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Missing => f.write_str("it has no encrypted_content"),
            Unread::Sealed(why) => write!(f, "{why}"),
            Unread::NoKey => f.write_str("this bridge has no seal key to open it with"),
        }
    }
}

/// The summary a compaction item carries.
pub(super) fn open(item: &InputItem<'_>, seal: Option<&Seal>) -> Result<String, Unread> {
    let sealed = item
        .encrypted_content
        .and_then(JsonStr::new)
        .filter(|s| !s.is_empty())
        .ok_or(Unread::Missing)?
        .decode();
    match seal {
        Some(seal) => seal.open_compaction(&sealed).map_err(Unread::Sealed),
        None if sealed.starts_with(PREFIX) => Err(Unread::NoKey),
        None => Err(Unread::Sealed(OpenError::Foreign)),
    }
}
