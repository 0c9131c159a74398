//! The tenancy rule: which namespace a request's records live in.

use sha2::{Digest, Sha256};

/// The tenant of requests that carry no `authorization` header.
pub const ANONYMOUS_TENANT: &str = "anonymous";

/// The tenant namespace for a credential.
///
/// A response is visible only to the credential that created it. The tenant
/// is the lowercase hex SHA-256 of the credential header's value, taken byte
/// for byte as it arrived (`Bearer sk-a` and `bearer sk-a` are two tenants),
/// or [`ANONYMOUS_TENANT`] when the header is absent. The value need not be
/// text: a header value with bytes outside visible ASCII (Latin-1, control
/// bytes, invalid UTF-8) is a credential like any other and gets a tenant of
/// its own rather than sharing the anonymous one. The credential itself is
/// never stored, only its digest, and a cryptographic hash keeps a crafted
/// credential from colliding into another tenant's namespace.
///
/// ```
/// use wirebridge_store::tenant_key;
///
/// let alice = tenant_key(Some(b"Bearer sk-alice"));
/// assert_eq!(alice.len(), 64);
/// assert_ne!(alice, tenant_key(Some(b"Bearer sk-bob")));
/// assert_ne!(tenant_key(Some(b"Bearer sk-\xe9")), "anonymous");
/// assert_eq!(tenant_key(None), "anonymous");
/// ```
pub fn tenant_key(credential: Option<&[u8]>) -> String {
    let Some(credential) = credential else {
        return ANONYMOUS_TENANT.to_owned();
    };
    let digest = Sha256::digest(credential);
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        // SHA-256("abc"), from FIPS 180-2.
        assert_eq!(
            tenant_key(Some(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn absent_is_anonymous_and_empty_is_not() {
        assert_eq!(tenant_key(None), ANONYMOUS_TENANT);
        assert_ne!(tenant_key(Some(b"")), ANONYMOUS_TENANT);
    }

    #[test]
    fn exact_bytes() {
        assert_ne!(tenant_key(Some(b"Bearer k")), tenant_key(Some(b"bearer k")));
        assert_eq!(tenant_key(Some(b"Bearer k")), tenant_key(Some(b"Bearer k")));
    }

    #[test]
    fn credentials_that_are_not_visible_ascii_are_tenants_of_their_own() {
        let latin1 = tenant_key(Some(b"Bearer caf\xe9"));
        let invalid_utf8 = tenant_key(Some(b"Bearer \xff\xfe"));
        let control = tenant_key(Some(b"Bearer k\x01"));
        let all = [&latin1, &invalid_utf8, &control];
        for (n, key) in all.iter().enumerate() {
            assert_ne!(key.as_str(), ANONYMOUS_TENANT);
            assert_eq!(key.len(), 64);
            assert!(all[n + 1..].iter().all(|other| other != key));
        }
        // The same bytes as UTF-8 text are another credential.
        assert_ne!(latin1, tenant_key(Some("Bearer café".as_bytes())));
    }
}
