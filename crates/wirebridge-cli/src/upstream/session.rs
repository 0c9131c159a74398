//! The conversation told to the backend: a backend or a router in front of
//! it that keeps sessions by a header (the profile's `session_header`)
//! gets, in that header, a digest of the conversation's key, the same for
//! every turn of one conversation from every bridge process.
//!
//! The key is the one the replicas are chosen by ([`Affinity`]): a hash of
//! the conversation's id, its `prompt_cache_key` or its stable prefix,
//! never of a credential.

use http::{HeaderName, HeaderValue, Request};
use wirebridge_tower::Affinity;

/// Puts the digest of the request's conversation key in header `name`. A
/// request without a key (a model list, a request passed through unread)
/// is left as it is.
pub(super) fn tell<B>(name: &HeaderName, request: &mut Request<B>) {
    let Some(affinity) = request.extensions().get::<Affinity>() else {
        return;
    };
    let value = HeaderValue::from_str(&digest(affinity.key()))
        .expect("hex digits are a valid header value");
    request.headers_mut().insert(name.clone(), value);
}

/// The key as 16 lower-case hex digits.
fn digest(key: u64) -> String {
    format!("{key:016x}")
}

#[cfg(test)]
mod tests;
