//! Prompt cache fingerprints on Redis: one string key a response, under its
//! tenant's hash tag (see `keys.rs`), written with the store's TTL by one
//! `SET … EX` and read by one `GET`, so every bridge sharing the server
//! compares with what any of them kept.
//!
//! As for conversations, Redis's `maxmemory` is the bound: a write it
//! refuses for want of memory is [`StoreError::NotKept`].

use super::{ttl_seconds, RedisStore};
use crate::StoreError;

impl RedisStore {
    /// Keeps the fingerprint of `id`, for the store's TTL.
    pub(super) async fn set_fingerprint(
        &self,
        tenant: &str,
        id: &str,
        fingerprint: String,
    ) -> Result<(), StoreError> {
        let key = self.keys(tenant).fingerprint(id);
        let mut cmd = redis::cmd("SET");
        cmd.arg(&key)
            .arg(fingerprint.as_bytes())
            .arg("EX")
            .arg(ttl_seconds(self.ttl));
        self.bounded(self.send::<()>(&cmd)).await
    }

    /// The fingerprint kept for `id`, if any.
    pub(super) async fn get_fingerprint(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        let key = self.keys(tenant).fingerprint(id);
        let mut cmd = redis::cmd("GET");
        cmd.arg(&key);
        let value: Option<Vec<u8>> = self.bounded(self.send(&cmd)).await?;
        value
            .map(|bytes| {
                String::from_utf8(bytes).map_err(|_| {
                    StoreError::Corrupt(format!("the fingerprint of {id} is not UTF-8"))
                })
            })
            .transpose()
    }
}
