//! Leases on background runs on Redis: one key a run, under its tenant's
//! hash tag (see `keys.rs`), set with `PX` by the process running it and
//! gone once its time passes unrenewed, so a reader on any bridge tells a
//! run still going from one whose process is gone.

use std::time::Duration;

use super::RedisStore;
use crate::StoreError;

impl RedisStore {
    /// Holds the lease on run `id` for `ttl` from now.
    pub(super) async fn set_lease(
        &self,
        tenant: &str,
        id: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let mut set = redis::cmd("SET");
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        set.arg(self.keys(tenant).lease(id))
            .arg(1)
            .arg("PX")
            .arg(millis);
        self.bounded(self.send::<()>(&set)).await
    }

    /// Whether the lease on run `id` is held.
    pub(super) async fn lease_exists(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut exists = redis::cmd("EXISTS");
        exists.arg(self.keys(tenant).lease(id));
        let found: u64 = self.bounded(self.send(&exists)).await?;
        Ok(found > 0)
    }
}
