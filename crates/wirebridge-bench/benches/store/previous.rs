//! The previous shape of the response store, rebuilt as the baseline: one
//! record per response holding its turn's input, its output, and the whole
//! `Response` object (the output items again, the echoed tools), and a
//! conversation read by walking parent ids, one read per response.
//!
//! In memory, a map per tenant behind a lock, a record cloned per read; on
//! Redis, one JSON value per response, the three texts embedded as JSON
//! strings, one `GET` per response.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use wirebridge_store::StoredResponse;

/// The most records a walk follows, as the previous store had it.
const MAX_CHAIN: usize = 10_000;

/// One response as the previous shape kept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousRecord {
    /// The layout version of a Redis value.
    v: u32,
    /// The response id.
    pub id: String,
    /// The response it continued.
    pub parent: Option<String>,
    /// Unix seconds.
    pub created_at: u64,
    /// The turn's input items, a JSON array.
    pub input: String,
    /// The output items, a JSON array.
    pub output: String,
    /// The whole `Response` object, output items included.
    pub response: String,
}

impl PreviousRecord {
    /// The previous shape of `record`, whose response object with its
    /// output is `full_response`.
    pub fn new(record: &StoredResponse, full_response: &str) -> Self {
        Self {
            v: 1,
            id: record.id.clone(),
            parent: record.parent.clone(),
            created_at: record.created_at,
            input: record.input.clone(),
            output: record.output.clone(),
            response: full_response.to_owned(),
        }
    }

    /// Bytes it holds.
    pub fn size(&self) -> usize {
        self.id.len()
            + self.parent.as_ref().map_or(0, String::len)
            + self.input.len()
            + self.output.len()
            + self.response.len()
    }
}

/// A conversation as the walk found it, oldest first.
pub struct PreviousChain {
    /// The records found, oldest first.
    pub records: Vec<PreviousRecord>,
    /// The parent the walk stopped at, when it was not found.
    pub missing: Option<String>,
}

/// Where the previous shape keeps records.
pub enum PreviousStore {
    /// Tenant → id → record.
    Memory(Mutex<HashMap<String, HashMap<String, PreviousRecord>>>),
    /// One value per response on a Redis server.
    Redis {
        /// The connection.
        connection: ConnectionManager,
        /// What keys start with.
        prefix: String,
        /// The requests sent, each one round trip.
        round_trips: std::sync::atomic::AtomicU64,
    },
}

impl PreviousStore {
    /// An empty store in memory.
    pub fn memory() -> Self {
        Self::Memory(Mutex::new(HashMap::new()))
    }

    /// A store on the Redis server at `url`, its keys under `prefix`.
    pub async fn redis(url: &str, prefix: &str) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| e.to_string())?;
        let connection = ConnectionManager::new(client)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Self::Redis {
            connection,
            prefix: prefix.to_owned(),
            round_trips: 0.into(),
        })
    }

    /// The requests sent to Redis so far (0 in memory).
    pub fn round_trips(&self) -> u64 {
        match self {
            Self::Memory(_) => 0,
            Self::Redis { round_trips, .. } => {
                round_trips.load(std::sync::atomic::Ordering::Relaxed)
            }
        }
    }

    /// Keeps `record` for `tenant`.
    pub async fn save(&self, tenant: &str, record: PreviousRecord) -> Result<(), String> {
        match self {
            Self::Memory(map) => {
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                let records = map.entry(tenant.to_owned()).or_default();
                records.insert(record.id.clone(), record);
                Ok(())
            }
            Self::Redis {
                connection, prefix, ..
            } => {
                let value = serde_json::to_vec(&record).map_err(|e| e.to_string())?;
                redis::cmd("SET")
                    .arg(key(prefix, tenant, &record.id))
                    .arg(value)
                    .exec_async(&mut connection.clone())
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// One record, if kept: a clone in memory, one `GET` and its decoding
    /// on Redis.
    pub async fn get(&self, tenant: &str, id: &str) -> Result<Option<PreviousRecord>, String> {
        match self {
            Self::Memory(map) => {
                let map = map.lock().unwrap_or_else(|e| e.into_inner());
                Ok(map.get(tenant).and_then(|records| records.get(id)).cloned())
            }
            Self::Redis {
                connection,
                prefix,
                round_trips,
            } => {
                round_trips.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let value: Option<Vec<u8>> = redis::cmd("GET")
                    .arg(key(prefix, tenant, id))
                    .query_async(&mut connection.clone())
                    .await
                    .map_err(|e| e.to_string())?;
                value
                    .map(|v| serde_json::from_slice(&v).map_err(|e| format!("{id}: {e}")))
                    .transpose()
            }
        }
    }

    /// The conversation ending at `id`, followed through parents one read
    /// at a time, as the previous store's `chain` did.
    pub async fn chain(&self, tenant: &str, id: &str) -> Result<Option<PreviousChain>, String> {
        let Some(last) = self.get(tenant, id).await? else {
            return Ok(None);
        };
        let mut seen = HashSet::from([last.id.clone()]);
        let mut records = vec![last];
        let mut missing = None;
        while let Some(parent) = records.last().and_then(|r| r.parent.clone()) {
            if records.len() >= MAX_CHAIN {
                break;
            }
            if !seen.insert(parent.clone()) {
                return Err(format!("the parents of {id} loop back to {parent}"));
            }
            match self.get(tenant, &parent).await? {
                Some(record) => records.push(record),
                None => {
                    missing = Some(parent);
                    break;
                }
            }
        }
        records.reverse();
        Ok(Some(PreviousChain { records, missing }))
    }
}

fn key(prefix: &str, tenant: &str, id: &str) -> String {
    format!("{prefix}:{tenant}:{id}")
}
