//! What a save and a read cost the response store as a conversation grows:
//! at depths 1, 100, 1,000 and 10,000, in memory (`MemoryStore`) and on a
//! real `redis-server` (`RedisStore`), when one is on `PATH` (or named by
//! `REDIS_SERVER`); without one the Redis cases are skipped, saying so.
//!
//! The conversation is of small turns (a user message in, an answer out,
//! about 300 B of items, and a 300 B response object), the shape under
//! which what every response kept used to be dominated by the list of its
//! ancestors. For each depth `d`:
//! - `save`: saving a response that continues the conversation's response
//!   at depth `d - 1` (a new conversation at depth 1). Each timed save is
//!   another such response (the first extends the conversation, the others
//!   branch from the same parent: the same work in either store); they are
//!   deleted, untimed, after each sample. The saves are made in a
//!   conversation of their own (another tenant's), so that the slots they
//!   leave do not weigh on the reads.
//! - `read`: `ResponseStore::chain` of the response at depth `d`, with every
//!   turn's items.
//!
//! Redis is measured twice: `redis`, a store that keeps no turn in the
//! process, so that every read has Redis send the whole conversation (as
//! another replica's first read does), and `redis_kept`, a store as it is
//! made by default, which keeps the turns it read and is sent only what is
//! new (nothing, here).
//!
//! Before the timings, the Redis commands one save runs (from `INFO
//! commandstats`) are printed for each depth.
//!
//! `cargo bench -p wirebridge-bench --bench store_depth`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use redis::aio::MultiplexedConnection;
use tokio::runtime::Runtime;
use wirebridge_store::{tenant_key, MemoryStore, RedisStore, ResponseStore, StoredResponse};

use wirebridge_bench::redis_server::RedisServer;

/// The depths measured.
const DEPTHS: [usize; 4] = [1, 100, 1_000, 10_000];

/// The id of the response at depth `depth` (from 1).
fn id(depth: usize) -> String {
    format!("resp_{depth:032x}")
}

/// A small turn: its id, its parent, about 300 B of items and a 300 B
/// response object.
fn small_turn(id: String, parent: Option<String>) -> StoredResponse {
    let input = format!(
        r#"[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Run the tests again, for {id}."}}]}}]"#
    );
    let output = format!(
        r#"[{{"type":"message","id":"msg_{id}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"All 214 tests pass; nothing changed since the last run.","annotations":[]}}]}}]"#
    );
    let response = format!(
        r#"{{"id":"{id}","object":"response","created_at":1767225600,"status":"completed","model":"gpt-5.4","output":[],"previous_response_id":{},"store":true,"usage":{{"input_tokens":1200,"output_tokens":24,"total_tokens":1224}},"metadata":{{}}}}"#,
        parent
            .as_deref()
            .map_or_else(|| "null".to_owned(), |p| format!("\"{p}\""))
    );
    StoredResponse {
        id,
        parent,
        created_at: 1_767_225_600,
        input,
        output,
        response,
    }
}

fn store_depth(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let tenants = Tenants {
        read: tenant_key(Some(b"Bearer sk-bench-read")),
        save: tenant_key(Some(b"Bearer sk-bench-save")),
    };
    let deepest = DEPTHS.iter().copied().max().unwrap_or(1);
    let sample = small_turn(id(1), None);
    println!(
        "store_depth bench: per turn, {} B of input items, {} B of output items, a {} B response object",
        sample.input.len(),
        sample.output.len(),
        sample.response.len()
    );

    // Bounds far above what a sample saves, so that nothing is evicted.
    let memory = MemoryStore::new()
        .max_entries(usize::MAX)
        .max_entries_per_tenant(usize::MAX)
        .max_bytes(usize::MAX)
        .max_bytes_per_tenant(usize::MAX);
    runtime.block_on(fill(&memory, &tenants, deepest));
    let cases = Cases {
        runtime: &runtime,
        tenants: &tenants,
        store: &memory,
    };
    cases.run(c, "memory", None);

    match RedisServer::start() {
        Ok(server) => {
            // A store that keeps no turn reads every turn from Redis, as
            // another replica's first read does; the default store, which
            // keeps the turns it read, is then sent only what is new.
            let (redis, kept, info) = runtime.block_on(async {
                let redis = RedisStore::builder(&server.url())
                    .kept_turns(0)
                    .connect()
                    .await
                    .expect("connect");
                let kept = RedisStore::connect(&server.url()).await.expect("connect");
                let client = redis::Client::open(server.url()).expect("a Redis URL");
                let info = client
                    .get_multiplexed_async_connection()
                    .await
                    .expect("connect");
                fill(&redis, &tenants, deepest).await;
                (redis, kept, info)
            });
            let cases = Cases {
                store: &redis,
                ..cases
            };
            cases.run(c, "redis", Some(info));
            let cases = Cases {
                store: &kept,
                ..cases
            };
            cases.run(c, "redis_kept", None);
            drop(server);
        }
        Err(why) => println!("store_depth bench: the Redis cases are skipped: {why}"),
    }
}

/// The tenant whose conversation is read, and the one whose conversation
/// the saves continue.
struct Tenants {
    read: String,
    save: String,
}

/// Saves one conversation `depth` turns deep for each tenant.
async fn fill(store: &dyn ResponseStore, tenants: &Tenants, depth: usize) {
    for tenant in [&tenants.read, &tenants.save] {
        for n in 1..=depth {
            let parent = (n > 1).then(|| id(n - 1));
            store
                .save(tenant, small_turn(id(n), parent))
                .await
                .expect("save");
        }
    }
}

/// One store, holding the conversations.
#[derive(Clone, Copy)]
struct Cases<'a> {
    runtime: &'a Runtime,
    tenants: &'a Tenants,
    store: &'a dyn ResponseStore,
}

impl Cases<'_> {
    fn run(&self, c: &mut Criterion, backend: &str, mut info: Option<MultiplexedConnection>) {
        for depth in DEPTHS {
            let name = format!("store_depth_{backend}/depth_{depth}");
            self.check(depth);
            if let Some(info) = info.as_mut() {
                let commands = self.runtime.block_on(self.commands_per_save(info, depth));
                println!("{name}: a save runs {commands} Redis commands");
            }
            let mut group = c.benchmark_group(&name);
            group.sample_size(20);
            let mut next = 0u64;
            group.bench_function("save", |b| {
                b.iter_custom(|iters| {
                    let ids: Vec<String> = (0..iters)
                        .map(|_| {
                            next += 1;
                            format!("resp_bench_{next}")
                        })
                        .collect();
                    self.runtime.block_on(self.saves(depth, &ids))
                });
            });
            let last = id(depth);
            group.bench_function("read", |b| {
                b.iter(|| self.runtime.block_on(self.read(&last)));
            });
            group.finish();
        }
    }

    /// The time `ids` take to save, each continuing the response at
    /// `depth - 1`; they are then deleted, untimed.
    async fn saves(&self, depth: usize, ids: &[String]) -> Duration {
        let parent = (depth > 1).then(|| id(depth - 1));
        let records: Vec<StoredResponse> = ids
            .iter()
            .map(|id| small_turn(id.clone(), parent.clone()))
            .collect();
        let started = Instant::now();
        let tenant = &self.tenants.save;
        for record in records {
            self.store.save(tenant, record).await.expect("save");
        }
        let took = started.elapsed();
        for id in ids {
            self.store.delete(tenant, id).await.expect("delete");
        }
        took
    }

    async fn read(&self, id: &str) -> wirebridge_store::Chain {
        let chain = self.store.chain(&self.tenants.read, id).await;
        chain.expect("read").expect("kept")
    }

    /// The chain at `depth` is whole, and a save there is read back whole.
    fn check(&self, depth: usize) {
        self.runtime.block_on(async {
            let chain = self.read(&id(depth)).await;
            assert!(chain.is_complete());
            assert_eq!(chain.turns.len(), depth);
            let probe = "resp_bench_probe".to_owned();
            self.saves(depth, std::slice::from_ref(&probe)).await;
        });
    }

    /// The commands the Redis server counts for one save at `depth`.
    async fn commands_per_save(&self, info: &mut MultiplexedConnection, depth: usize) -> u64 {
        let parent = (depth > 1).then(|| id(depth - 1));
        let record = small_turn("resp_bench_counted".to_owned(), parent);
        let tenant = &self.tenants.save;
        let before = commands(info).await;
        self.store.save(tenant, record).await.expect("save");
        let after = commands(info).await;
        self.store
            .delete(tenant, "resp_bench_counted")
            .await
            .expect("delete");
        after - before
    }
}

/// The calls of every command Redis has counted but `INFO`.
async fn commands(info: &mut MultiplexedConnection) -> u64 {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(info)
        .await
        .expect("INFO commandstats");
    text.lines()
        .filter(|line| line.starts_with("cmdstat_") && !line.starts_with("cmdstat_info:"))
        .filter_map(|line| {
            line.split_once("calls=")?
                .1
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

criterion_group!(benches, store_depth);
criterion_main!(benches);
