//! How many WebSocket connections each tenant holds open, against its cap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The open connections of every tenant of one layer: shared by its
/// services, counted up at the handshake and down when a connection ends.
#[derive(Debug, Default)]
pub(crate) struct OpenSockets {
    by_tenant: Mutex<HashMap<String, usize>>,
}

/// A connection's place under its tenant's cap: given up when dropped.
#[derive(Debug)]
pub(crate) struct SocketPlace {
    open: Arc<OpenSockets>,
    tenant: String,
}

impl OpenSockets {
    /// A place for one more of `tenant`'s connections, unless it holds
    /// `max` already.
    pub(crate) fn take(self: &Arc<Self>, tenant: &str, max: usize) -> Option<SocketPlace> {
        let mut by_tenant = self
            .by_tenant
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let open = by_tenant.entry(tenant.to_owned()).or_default();
        if *open >= max {
            return None;
        }
        *open += 1;
        Some(SocketPlace {
            open: Arc::clone(self),
            tenant: tenant.to_owned(),
        })
    }
}

impl Drop for SocketPlace {
    fn drop(&mut self) {
        let mut by_tenant = self
            .open
            .by_tenant
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(open) = by_tenant.get_mut(&self.tenant) {
            *open -= 1;
            if *open == 0 {
                by_tenant.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tenant_has_its_own_cap_and_places_come_back() {
        let open = Arc::new(OpenSockets::default());
        let a1 = open.take("a", 2).unwrap();
        let _a2 = open.take("a", 2).unwrap();
        assert!(open.take("a", 2).is_none());
        let _b1 = open.take("b", 2).unwrap();
        drop(a1);
        assert!(open.take("a", 2).is_some());
    }
}
