//! The credentials the backend has accepted: what is answered without the
//! backend (a WebSocket warm-up, a Conversations API write) may be kept in
//! the shared store under.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// Tenants remembered at most; past this the set starts again, and each
/// tenant is accepted anew at its next answered request.
const MAX_TENANTS: usize = 65_536;

/// Tenants (their store keys) of which the backend has answered, with a
/// success, at least one request the bridge keeps (on a WebSocket
/// connection, every turn is kept), or the check of a Conversations API
/// write (`GET …/models`), on this replica. Refused credentials are never
/// written down: anyone can make up as many as they like.
///
/// A warm-up (`generate: false`) never reaches the backend, so nothing has
/// checked its credential: made-up keys could fill the shared store, or
/// evict real tenants' conversations, at no cost. Until a tenant's
/// credential has been accepted, its warm-ups are kept on their
/// connection only.
#[derive(Debug, Default)]
pub(crate) struct Accepted {
    tenants: Mutex<HashSet<String>>,
}

impl Accepted {
    /// The backend answered one of `tenant`'s requests.
    pub(crate) fn accept(&self, tenant: &str) {
        let mut tenants = self.tenants.lock().unwrap_or_else(PoisonError::into_inner);
        if tenants.contains(tenant) {
            return;
        }
        if tenants.len() >= MAX_TENANTS {
            tenants.clear();
        }
        tenants.insert(tenant.to_owned());
    }

    /// Whether the backend has answered one of `tenant`'s requests.
    pub(crate) fn is_accepted(&self, tenant: &str) -> bool {
        self.tenants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tenant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_is_accepted_once_answered() {
        let accepted = Accepted::default();
        assert!(!accepted.is_accepted("a"));
        accepted.accept("a");
        accepted.accept("a");
        assert!(accepted.is_accepted("a"));
        assert!(!accepted.is_accepted("b"));
    }
}
