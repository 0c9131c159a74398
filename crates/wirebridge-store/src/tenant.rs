//! The tenancy rule: which namespace a request's records live in.

use sha2::{Digest, Sha256};

/// The tenant of requests that carry no `authorization` header.
pub const ANONYMOUS_TENANT: &str = "anonymous";

/// The tenant namespace for a credential.
///
/// A response is visible only to the credential that created it. The tenant
/// is the lowercase hex SHA-256 of the `authorization` header value, taken
/// byte for byte (`Bearer sk-a` and `bearer sk-a` are two tenants), or
/// [`ANONYMOUS_TENANT`] when the header is absent. The credential itself is
/// never stored, only its digest, and a cryptographic hash keeps a crafted
/// credential from colliding into another tenant's namespace.
///
/// ```
/// use wirebridge_store::tenant_key;
///
/// let alice = tenant_key(Some("Bearer sk-alice"));
/// assert_eq!(alice.len(), 64);
/// assert_ne!(alice, tenant_key(Some("Bearer sk-bob")));
/// assert_eq!(tenant_key(None), "anonymous");
/// ```
pub fn tenant_key(authorization: Option<&str>) -> String {
    let Some(credential) = authorization else {
        return ANONYMOUS_TENANT.to_owned();
    };
    let digest = Sha256::digest(credential.as_bytes());
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
            tenant_key(Some("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn absent_is_anonymous_and_empty_is_not() {
        assert_eq!(tenant_key(None), ANONYMOUS_TENANT);
        assert_ne!(tenant_key(Some("")), ANONYMOUS_TENANT);
    }

    #[test]
    fn exact_bytes() {
        assert_ne!(tenant_key(Some("Bearer k")), tenant_key(Some("bearer k")));
        assert_eq!(tenant_key(Some("Bearer k")), tenant_key(Some("Bearer k")));
    }
}
