//! Signatures of thinking text, and the opaque data of redacted thinking.
//!
//! Anthropic signs every `thinking` block it sends and refuses a later
//! request whose thinking blocks were altered. The demo does the same with a
//! keyed hash of the block's text under a fixed key, written in base64: a
//! proxy that carries thinking blocks between turns must carry the text and
//! the signature exactly, or the demo refuses the next turn. The hash is not
//! cryptographic (the key is public); it catches mistakes, not forgers.

/// The key every signature is made with.
const DEMO_KEY: &[u8] = b"wirebridge-demo thinking signature key";

/// Bytes of a signature (64 base64 characters).
const SIGNATURE_BYTES: usize = 48;

/// The signature the demo gives a thinking block whose text is
/// `thinking`: what a client sends back with the block on a later turn.
/// Public so that a benchmark or a test can send a recorded conversation's
/// thinking blocks as if the demo had written them.
pub fn sign(thinking: &str) -> String {
    base64(&keyed_hash(b"signature", thinking.as_bytes()))
}

/// Whether `signature` is the signature of `thinking`.
pub(crate) fn verify(thinking: &str, signature: &str) -> bool {
    sign(thinking) == signature
}

/// The opaque `data` of a `redacted_thinking` block, derived from `seed`
/// (an id of the answer) so that it is the same for the same request.
pub(crate) fn redacted_data(seed: &str) -> String {
    base64(&keyed_hash(b"redacted", seed.as_bytes()))
}

/// [`SIGNATURE_BYTES`] bytes of FNV-1a over the key, a purpose, a lane
/// number and the message, each lane finished with splitmix64's mixer so
/// that a one-byte change of the message changes every byte.
fn keyed_hash(purpose: &[u8], message: &[u8]) -> [u8; SIGNATURE_BYTES] {
    let mut out = [0u8; SIGNATURE_BYTES];
    for (lane, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = fnv1a(FNV_OFFSET, DEMO_KEY);
        h = fnv1a(h, purpose);
        h = fnv1a(h, &(lane as u64).to_le_bytes());
        h = fnv1a(h, &(message.len() as u64).to_le_bytes());
        h = fnv1a(h, message);
        chunk.copy_from_slice(&mix(h).to_le_bytes()[..chunk.len()]);
    }
    out
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Standard base64, with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_known_bytes() {
        // RFC 4648, section 10.
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn signatures_follow_the_text() {
        let text = "The user wrote 2 words. I will repeat them back.";
        let signature = sign(text);
        assert_eq!(signature.len(), 64);
        assert!(verify(text, &signature));
        assert!(!verify(
            "The user wrote 3 words. I will repeat them back.",
            &signature
        ));
        assert!(!verify(text, ""));
        assert_ne!(sign("a"), sign("b"));
        assert_ne!(redacted_data("msg_1"), sign("msg_1"));
        assert_eq!(redacted_data("msg_1"), redacted_data("msg_1"));
    }
}
