//! What continuing a stored conversation costs the response store: reading
//! the chain a `previous_response_id` names, with every turn's input and
//! output items (all a continuation reads), at depths 1, 50 and 500.
//!
//! Each depth is measured for the current shape (`ResponseStore::chain`:
//! each item kept once, each response in its conversation, one read
//! whatever the depth) and, as the baseline in the same run, for the
//! previous shape, rebuilt here (`store/previous.rs`): one record per
//! response with its input, output and whole ~20 KB `Response` object,
//! read by walking parent ids one read at a time. Both in memory
//! (`MemoryStore` against a map of records) and on a real `redis-server`
//! (`RedisStore` against one `GET` per response), when one is on `PATH` (or
//! named by `REDIS_SERVER`); without one the Redis cases are skipped, saying
//! so. Before the timings, the bytes one read returns (in memory) or Redis
//! sends (on the wire, from `INFO stats`) and the Redis round trips are
//! printed for each case.
//!
//! `cargo bench -p wirebridge-bench --bench store`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

#[path = "store/conversation.rs"]
mod conversation;
#[path = "store/previous.rs"]
mod previous;

use criterion::{criterion_group, criterion_main, Criterion};
use redis::aio::MultiplexedConnection;
use tokio::runtime::Runtime;
use wirebridge_bench::cases;
use wirebridge_store::{tenant_key, MemoryStore, RedisStore, ResponseStore};

use conversation::Conversation;
use previous::{PreviousRecord, PreviousStore};
use wirebridge_bench::redis_server::RedisServer;

/// The depths measured: a first continuation, a long session, and an agent
/// loop of hundreds of tool calls.
const DEPTHS: [usize; 3] = [1, 50, 500];

fn store(c: &mut Criterion) {
    let shared = cases::shared_dir().unwrap_or_else(|e| panic!("{e}"));
    let deepest = DEPTHS.iter().copied().max().unwrap_or(1);
    let conversation = Conversation::build(&shared, deepest).unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let tenant = tenant_key(Some(b"Bearer sk-bench"));
    let sizes = &conversation.records[0];
    println!(
        "store bench: per turn, {} B of input items, {} B of output items, a {} B response object (previous shape: {} B)",
        sizes.input.len(),
        sizes.output.len(),
        sizes.response.len(),
        conversation.full_responses[0].len(),
    );

    let current = MemoryStore::new();
    let baseline = PreviousStore::memory();
    runtime.block_on(fill(&current, &baseline, &tenant, &conversation));
    let cases = Cases {
        runtime: &runtime,
        tenant: &tenant,
        conversation: &conversation,
        current: &current,
        redis: None,
        baseline: &baseline,
    };
    cases.run(c, "memory", None);

    match RedisServer::start() {
        Ok(server) => {
            let (current, baseline, info) = runtime.block_on(async {
                let current = RedisStore::connect(&server.url()).await.expect("connect");
                let baseline = PreviousStore::redis(&server.url(), "bench:previous")
                    .await
                    .expect("connect");
                let client = redis::Client::open(server.url()).expect("a Redis URL");
                let info = client
                    .get_multiplexed_async_connection()
                    .await
                    .expect("connect");
                fill(&current, &baseline, &tenant, &conversation).await;
                (current, baseline, info)
            });
            let cases = Cases {
                current: &current,
                redis: Some(&current),
                baseline: &baseline,
                ..cases
            };
            cases.run(c, "redis", Some(info));
            drop(server);
        }
        Err(why) => println!("store bench: the Redis cases are skipped: {why}"),
    }
}

/// Saves the conversation in both shapes.
async fn fill(
    current: &dyn ResponseStore,
    baseline: &PreviousStore,
    tenant: &str,
    conversation: &Conversation,
) {
    for (record, full) in conversation
        .records
        .iter()
        .zip(&conversation.full_responses)
    {
        baseline
            .save(tenant, PreviousRecord::new(record, full))
            .await
            .expect("save in the previous shape");
        current
            .save(tenant, record.clone())
            .await
            .expect("save in the current shape");
    }
}

/// One backend's stores, holding the same conversation.
#[derive(Clone, Copy)]
struct Cases<'a> {
    runtime: &'a Runtime,
    tenant: &'a str,
    conversation: &'a Conversation,
    current: &'a dyn ResponseStore,
    /// The current store again when it is on Redis, for its round trips.
    redis: Option<&'a RedisStore>,
    baseline: &'a PreviousStore,
}

impl Cases<'_> {
    /// Checks that both shapes read the same turns, prints what a read
    /// costs, and times both at every depth. `info`: a connection to the
    /// Redis server both stores use, to read its byte counter.
    fn run(&self, c: &mut Criterion, backend: &str, mut info: Option<MultiplexedConnection>) {
        for depth in DEPTHS {
            let id = self.conversation.records[depth - 1].id.as_str();
            let name = format!("store_{backend}/depth_{depth}");
            self.check(id, depth);
            self.report(&name, id, info.as_mut());

            let mut group = c.benchmark_group(&name);
            group.sample_size(20);
            group.bench_function("current", |b| {
                b.iter(|| self.runtime.block_on(self.current(id)));
            });
            group.bench_function("previous", |b| {
                b.iter(|| self.runtime.block_on(self.previous(id)));
            });
            group.finish();
        }
    }

    /// The current shape's read: the chain, with each turn's items.
    async fn current(&self, id: &str) -> wirebridge_store::Chain {
        let chain = self.current.chain(self.tenant, id).await;
        chain.expect("read").expect("kept")
    }

    /// The previous shape's read: every record, walking parents.
    async fn previous(&self, id: &str) -> previous::PreviousChain {
        let chain = self.baseline.chain(self.tenant, id).await;
        chain.expect("read").expect("kept")
    }

    /// Both shapes read the whole conversation, the same items in order.
    fn check(&self, id: &str, depth: usize) {
        let (current, previous) = self
            .runtime
            .block_on(async { (self.current(id).await, self.previous(id).await) });
        assert!(current.is_complete() && previous.missing.is_none());
        let current: Vec<_> = current
            .turns
            .iter()
            .map(|t| (&*t.input, &*t.output))
            .collect();
        let previous: Vec<_> = previous
            .records
            .iter()
            .map(|r| (r.input.as_str(), r.output.as_str()))
            .collect();
        assert_eq!(current.len(), depth);
        assert_eq!(current, previous, "the two shapes read different turns");
    }

    /// Prints the bytes and round trips of one read in each shape.
    fn report(&self, name: &str, id: &str, info: Option<&mut MultiplexedConnection>) {
        let (Some(info), Some(redis)) = (info, self.redis) else {
            let (current, previous) = self
                .runtime
                .block_on(async { (self.current(id).await, self.previous(id).await) });
            let current: usize = current
                .turns
                .iter()
                .map(|t| t.id.len() + t.input.len() + t.output.len())
                .sum::<usize>()
                + current.ids.iter().map(|id| id.len()).sum::<usize>();
            let previous: usize = previous.records.iter().map(PreviousRecord::size).sum();
            println!(
                "{name}: a read returns {current} B (current shape), {previous} B (previous shape)"
            );
            return;
        };
        let (current, previous) = self.runtime.block_on(async {
            let overhead = sent_by_redis(info, async {}).await;
            let trips = redis.round_trips();
            let current = sent_by_redis(info, self.current(id)).await;
            let current = (
                current.saturating_sub(overhead),
                redis.round_trips() - trips,
            );
            let trips = self.baseline.round_trips();
            let previous = sent_by_redis(info, self.previous(id)).await;
            let previous = (
                previous.saturating_sub(overhead),
                self.baseline.round_trips() - trips,
            );
            (current, previous)
        });
        println!(
            "{name}: Redis sends {} B over {} round trip(s) (current shape), {} B over {} (previous shape)",
            current.0, current.1, previous.0, previous.1
        );
    }
}

/// The bytes Redis sent its clients while `work` ran, counting the reply to
/// one `INFO stats` (which the caller can measure with empty `work`).
async fn sent_by_redis(info: &mut MultiplexedConnection, work: impl std::future::Future) -> u64 {
    let before = net_output(info).await;
    work.await;
    net_output(info).await - before
}

/// Redis's `total_net_output_bytes`.
async fn net_output(info: &mut MultiplexedConnection) -> u64 {
    let text: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(info)
        .await
        .expect("INFO stats");
    text.lines()
        .find_map(|line| line.strip_prefix("total_net_output_bytes:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO stats reports total_net_output_bytes")
}

criterion_group!(benches, store);
criterion_main!(benches);
