//! The carrier of a Messages backend's thinking: a `thinking` or
//! `redacted_thinking` block, kept byte for byte (its signature with it) in
//! a reasoning item's `encrypted_content`, so that the next turn hands the
//! backend exactly what it wrote. A Messages backend refuses a thinking
//! block whose signature does not match its text, and needs the blocks of
//! a turn that called tools to continue it.
//!
//! With a sealer the block is sealed for the tenant (`wbt1.`): a carrier
//! altered, or taken from another tenant, is refused before anything is
//! sent. Without one it is only encoded (`wbt0.`), and the backend's own
//! signature is all that guards it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::value::RawValue;

use crate::responses_to_chat::Seal;
use crate::seal::{OpenError, Purpose, PREFIX};

/// The prefix of a sealed carrier.
pub const SEALED: &str = "wbt1.";
/// The prefix of a carrier encoded without a sealer.
pub const ENCODED: &str = "wbt0.";

/// Whether `encrypted_content` is a thinking carrier of this bridge.
pub(super) fn is_carrier(content: &str) -> bool {
    content.starts_with(SEALED) || content.starts_with(ENCODED)
}

/// The carrier of one block (its JSON text).
pub(super) fn carry(block: &str, seal: Option<&Seal>) -> String {
    match seal {
        Some(seal) => {
            let sealed = seal
                .sealer
                .seal(Purpose::Thinking, &seal.scope, block.as_bytes());
            let mut carrier = String::with_capacity(sealed.len());
            carrier.push_str(SEALED);
            carrier.push_str(&sealed[PREFIX.len()..]);
            carrier
        }
        None => {
            let mut carrier = String::from(ENCODED);
            URL_SAFE_NO_PAD.encode_string(block.as_bytes(), &mut carrier);
            carrier
        }
    }
}

/// The block a carrier holds. A sealed carrier opens only with the seal of
/// the tenant it was sealed for; an encoded one only where nothing is
/// sealed (where a sealer is set, this bridge writes no encoded carrier, so
/// one is forged).
pub(super) fn open(carrier: &str, seal: Option<&Seal>) -> Result<Box<RawValue>, OpenError> {
    let bytes = match (carrier.strip_prefix(SEALED), seal) {
        (Some(sealed), Some(seal)) => {
            let sealed = format!("{PREFIX}{sealed}");
            seal.sealer.open(Purpose::Thinking, &seal.scope, &sealed)?
        }
        (Some(_), None) => return Err(OpenError::Unopenable),
        (None, _) => {
            let encoded = carrier.strip_prefix(ENCODED).ok_or(OpenError::Foreign)?;
            if seal.is_some() {
                return Err(OpenError::Unopenable);
            }
            URL_SAFE_NO_PAD
                .decode(encoded)
                .map_err(|_| OpenError::Unopenable)?
        }
    };
    let text = String::from_utf8(bytes).map_err(|_| OpenError::Unopenable)?;
    match RawValue::from_string(text) {
        Ok(block) if block.get().starts_with('{') => Ok(block),
        _ => Err(OpenError::Unopenable),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::seal::{SealKey, Sealer};

    fn seal(scope: &str) -> Seal {
        Seal {
            sealer: Arc::new(Sealer::new(SealKey::generate(), Vec::new())),
            scope: scope.into(),
        }
    }

    const BLOCK: &str =
        r#"{"type":"thinking","thinking":"Let me see.","signature":"c2lnbmF0dXJl"}"#;

    #[test]
    fn a_block_comes_back_byte_for_byte() {
        let tenant = seal("a");
        let carrier = carry(BLOCK, Some(&tenant));
        assert!(carrier.starts_with(SEALED) && is_carrier(&carrier));
        assert!(!carrier.contains("Let me see"));
        assert_eq!(open(&carrier, Some(&tenant)).unwrap().get(), BLOCK);
        let plain = carry(BLOCK, None);
        assert!(plain.starts_with(ENCODED));
        assert_eq!(open(&plain, None).unwrap().get(), BLOCK);
    }

    #[test]
    fn altered_foreign_and_forged_carriers_do_not_open() {
        let tenant = seal("a");
        let carrier = carry(BLOCK, Some(&tenant));
        // Another tenant under the same keys.
        let other = Seal {
            scope: "b".into(),
            ..tenant.clone()
        };
        assert_eq!(
            open(&carrier, Some(&other)).unwrap_err(),
            OpenError::Unopenable
        );
        // One character changed.
        let mut altered = carrier.clone().into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        assert_eq!(
            open(&altered, Some(&tenant)).unwrap_err(),
            OpenError::Unopenable
        );
        // An encoded carrier where the bridge seals: written by someone else.
        let forged = carry(BLOCK, None);
        assert_eq!(
            open(&forged, Some(&tenant)).unwrap_err(),
            OpenError::Unopenable
        );
        // Not a carrier at all.
        assert_eq!(
            open("gAAAAB…", Some(&tenant)).unwrap_err(),
            OpenError::Foreign
        );
        assert!(!is_carrier("gAAAAB…"));
    }
}
