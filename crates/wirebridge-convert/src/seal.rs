//! Sealing: state the bridge hands a client to carry, that only the bridge
//! can read back.
//!
//! A stateless client (Codex runs with `store: false`) gets reasoning back
//! as `encrypted_content` and returns it in the next request, where the
//! bridge opens it and replays the reasoning to the backend. The carrier is
//! authenticated encryption (XChaCha20-Poly1305 from the RustCrypto
//! project, with a random 192-bit nonce per message), bound to a purpose
//! and to the tenant it was sealed for, so a carrier cannot be altered,
//! used as another kind of state, or replayed by another tenant.
//!
//! ```
//! use wirebridge_convert::seal::{Purpose, SealKey, Sealer};
//!
//! let sealer = Sealer::new(SealKey::generate(), Vec::new());
//! let sealed = sealer.seal(Purpose::Reasoning, "tenant-a", b"the model's reasoning");
//! assert!(sealed.starts_with("wbs1."));
//! assert_eq!(
//!     sealer.open(Purpose::Reasoning, "tenant-a", &sealed).unwrap(),
//!     b"the model's reasoning"
//! );
//! // Another tenant, or another purpose, cannot open it.
//! assert!(sealer.open(Purpose::Reasoning, "tenant-b", &sealed).is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

/// The prefix of every carrier this bridge seals, with the format version.
pub const PREFIX: &str = "wbs1.";

const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// What a carrier holds; part of what is authenticated, so one kind can
/// never be opened as the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A reasoning item's text.
    Reasoning,
    /// A compaction item's summary of the conversation.
    Compaction,
    /// A Messages backend's thinking block, kept byte for byte with its
    /// signature for the backend to read again.
    Thinking,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Reasoning => b"wirebridge/reasoning/1",
            Purpose::Compaction => b"wirebridge/compaction/1",
            Purpose::Thinking => b"wirebridge/thinking/1",
        }
    }
}

/// A 256-bit sealing key.
#[derive(Clone, PartialEq, Eq)]
pub struct SealKey([u8; 32]);

impl SealKey {
    /// A fresh random key from the operating system's generator.
    pub fn generate() -> Self {
        SealKey(XChaCha20Poly1305::generate_key(&mut OsRng).into())
    }

    /// The key as settings write it: standard base64.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key itself.
        f.write_str("SealKey(..)")
    }
}

/// Why a setting is not a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a seal key is 32 random bytes written in base64 (44 characters) or hex (64 characters); this one decodes to {0}")]
pub struct KeyError(String);

impl FromStr for SealKey {
    type Err = KeyError;

    /// Reads standard or URL-safe base64 (with or without padding), or hex.
    fn from_str(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| KeyError("invalid hex".into()))?
        } else {
            let unpadded = text
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_");
            URL_SAFE_NO_PAD
                .decode(unpadded)
                .map_err(|_| KeyError("neither base64 nor hex".into()))?
        };
        let key: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| KeyError(format!("{} bytes, not 32", bytes.len())))?;
        Ok(SealKey(key))
    }
}

/// Why a carrier could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Not something this bridge seals (another server's `encrypted_content`).
    #[error("it was not sealed by this bridge")]
    Foreign,
    /// This bridge's format, but no key opens it: sealed with a key no
    /// longer configured, for another tenant or purpose, or altered.
    #[error(
        "no configured key opens it (sealed with a retired key, for another tenant, or altered)"
    )]
    Unopenable,
}

/// Seals with the current key, and opens with it or any previous one (so
/// keys can be rotated without breaking the carriers clients hold).
///
/// Several bridge replicas behind one load balancer must share the keys.
#[derive(Clone)]
pub struct Sealer {
    current: XChaCha20Poly1305,
    previous: Vec<XChaCha20Poly1305>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("previous_keys", &self.previous.len())
            .finish_non_exhaustive()
    }
}

impl Sealer {
    /// Seals with `current`; opens with `current` or any of `previous`.
    pub fn new(current: SealKey, previous: Vec<SealKey>) -> Self {
        let cipher = |key: &SealKey| XChaCha20Poly1305::new(Key::from_slice(&key.0));
        Self {
            current: cipher(&current),
            previous: previous.iter().map(cipher).collect(),
        }
    }

    /// Seals `plaintext` for `scope` (the tenant): `wbs1.` and the base64url
    /// of nonce, ciphertext and tag.
    pub fn seal(&self, purpose: Purpose, scope: &str, plaintext: &[u8]) -> String {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = associated_data(purpose, scope);
        let sealed = self
            .current
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .expect("XChaCha20-Poly1305 seals any message that fits in memory");
        let mut blob = Vec::with_capacity(NONCE_LEN + sealed.len());
        blob.extend_from_slice(&nonce);
        blob.extend_from_slice(&sealed);
        let mut out = String::with_capacity(PREFIX.len() + blob.len() * 4 / 3 + 4);
        out.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(&blob, &mut out);
        out
    }

    /// Opens a carrier sealed for `purpose` and `scope`.
    pub fn open(&self, purpose: Purpose, scope: &str, sealed: &str) -> Result<Vec<u8>, OpenError> {
        let encoded = sealed.strip_prefix(PREFIX).ok_or(OpenError::Foreign)?;
        let blob = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| OpenError::Unopenable)?;
        if blob.len() < NONCE_LEN + TAG_LEN {
            return Err(OpenError::Unopenable);
        }
        let (nonce, ciphertext) = blob.split_at(NONCE_LEN);
        let nonce = XNonce::from_slice(nonce);
        let aad = associated_data(purpose, scope);
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find_map(|cipher| {
                cipher
                    .decrypt(
                        nonce,
                        Payload {
                            msg: ciphertext,
                            aad: &aad,
                        },
                    )
                    .ok()
            })
            .ok_or(OpenError::Unopenable)
    }
}

/// What is authenticated beside the ciphertext: the purpose, then the
/// scope, separated so no two (purpose, scope) pairs collide.
fn associated_data(purpose: Purpose, scope: &str) -> Vec<u8> {
    let label = purpose.label();
    let mut aad = Vec::with_capacity(label.len() + 1 + scope.len());
    aad.extend_from_slice(label);
    aad.push(0);
    aad.extend_from_slice(scope.as_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_binds_purpose_and_scope() {
        let sealer = Sealer::new(SealKey::generate(), Vec::new());
        let sealed = sealer.seal(Purpose::Reasoning, "t", "é thought".as_bytes());
        assert_eq!(
            sealer.open(Purpose::Reasoning, "t", &sealed).unwrap(),
            "é thought".as_bytes()
        );
        assert_eq!(
            sealer.open(Purpose::Compaction, "t", &sealed),
            Err(OpenError::Unopenable)
        );
        assert_eq!(
            sealer.open(Purpose::Reasoning, "u", &sealed),
            Err(OpenError::Unopenable)
        );
        // Two seals of one text differ (random nonces).
        assert_ne!(
            sealed,
            sealer.seal(Purpose::Reasoning, "t", "é thought".as_bytes())
        );
    }

    #[test]
    fn tampering_is_detected_and_foreign_carriers_named() {
        let sealer = Sealer::new(SealKey::generate(), Vec::new());
        let sealed = sealer.seal(Purpose::Reasoning, "t", b"secret");
        for at in [PREFIX.len(), PREFIX.len() + 30, sealed.len() - 1] {
            let mut bytes = sealed.clone().into_bytes();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            let altered = String::from_utf8(bytes).unwrap();
            assert_eq!(
                sealer.open(Purpose::Reasoning, "t", &altered),
                Err(OpenError::Unopenable),
                "altered at {at}"
            );
        }
        assert_eq!(
            sealer.open(Purpose::Reasoning, "t", "gAAAAABo-openai-fernet"),
            Err(OpenError::Foreign)
        );
        assert_eq!(
            sealer.open(Purpose::Reasoning, "t", "wbs1.short"),
            Err(OpenError::Unopenable)
        );
    }

    #[test]
    fn rotation_keeps_old_carriers_readable() {
        let old = SealKey::generate();
        let sealed = Sealer::new(old.clone(), Vec::new()).seal(Purpose::Reasoning, "t", b"x");
        let rotated = Sealer::new(SealKey::generate(), vec![old]);
        assert_eq!(
            rotated.open(Purpose::Reasoning, "t", &sealed).unwrap(),
            b"x"
        );
        let forgotten = Sealer::new(SealKey::generate(), Vec::new());
        assert_eq!(
            forgotten.open(Purpose::Reasoning, "t", &sealed),
            Err(OpenError::Unopenable)
        );
    }

    #[test]
    fn keys_read_from_base64_and_hex() {
        let key = SealKey::generate();
        let text = key.to_base64();
        assert_eq!(text.parse::<SealKey>().unwrap(), key);
        assert_eq!(text.trim_end_matches('=').parse::<SealKey>().unwrap(), key);
        let hex: String = key.0.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex.parse::<SealKey>().unwrap(), key);
        let err = "c2hvcnQ=".parse::<SealKey>().unwrap_err();
        assert!(err.to_string().contains("5 bytes"), "{err}");
        assert!("not a key!".parse::<SealKey>().is_err());
        assert_eq!(format!("{key:?}"), "SealKey(..)");
    }
}
