//! `RedisStore` on a real three-node Redis Cluster (`redis+cluster://`): the
//! shared suites (responses and conversations, whose scripts each name the
//! keys of one slot), each tenant's keys on one node, one round trip per
//! save at any depth and per chain of one piece, a chain of many pieces
//! read on its tenant's node, and a store made before the cluster is up. Run with `--features redis`; needs `redis-server` and `redis-cli`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{tenant, turn, PassOverHalfTheTtl};
use redis::aio::MultiplexedConnection;
use redis_server::cluster::RedisCluster;
use redis_server::free_port;
use wirebridge_store::{RedisStore, ResponseStore, StoreError};

/// A store on the cluster shared by this binary's tests, under a prefix of
/// its own so that tests running at once see only their own keys.
async fn fixture() -> ((), RedisStore) {
    static STORES: AtomicUsize = AtomicUsize::new(0);
    let cluster = RedisCluster::shared();
    let n = STORES.fetch_add(1, Ordering::Relaxed);
    let store = RedisStore::builder(&cluster.url())
        .connect()
        .await
        .expect("connect to the cluster")
        .prefix(format!("suite{n}"));
    ((), store)
}

async fn expiring_fixture() -> ((), RedisStore, PassOverHalfTheTtl) {
    let ((), store) = fixture().await;
    let pass: PassOverHalfTheTtl =
        Box::new(|| Box::pin(tokio::time::sleep(Duration::from_millis(1300))));
    ((), store.ttl(Duration::from_secs(2)), pass)
}

shared_suite!();
conversation_suite!();

/// A plain connection to each node.
async fn nodes(cluster: &RedisCluster) -> Vec<MultiplexedConnection> {
    let mut connections = Vec::new();
    for port in cluster.ports() {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        connections.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    connections
}

async fn keys(node: &mut MultiplexedConnection, pattern: &str) -> Vec<String> {
    redis::cmd("KEYS")
        .arg(pattern)
        .query_async(node)
        .await
        .unwrap()
}

/// The calls of `command` every node has counted, from `INFO commandstats`.
async fn calls(nodes: &mut [MultiplexedConnection], command: &str) -> u64 {
    let mut total = 0;
    for node in nodes {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(node)
            .await
            .unwrap();
        let prefix = format!("cmdstat_{command}:calls=");
        total += info
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse::<u64>().unwrap());
    }
    total
}

/// Every key of a tenant is on one node, so that the scripts, which name
/// keys of one slot only, run there; tenants spread over the nodes.
#[tokio::test]
async fn each_tenant_is_on_one_node_and_tenants_spread() {
    let cluster = RedisCluster::shared();
    let store = RedisStore::builder(&cluster.url())
        .build()
        .unwrap()
        .prefix("spread");
    let tenants: Vec<String> = (0..12).map(|n| tenant(&format!("spread-{n}"))).collect();
    for t in &tenants {
        store.save(t, turn("resp_1", &[])).await.unwrap();
        store.save(t, turn("resp_2", &["resp_1"])).await.unwrap();
        let chain = store.chain(t, "resp_2").await.unwrap().unwrap();
        assert_eq!(chain.turns.len(), 2);
        assert_eq!(chain.missing, None);
    }
    let mut nodes = nodes(cluster).await;
    let mut used = BTreeSet::new();
    for t in &tenants {
        let holding: Vec<(usize, usize)> = {
            let mut holding = Vec::new();
            for (n, node) in nodes.iter_mut().enumerate() {
                let found = keys(node, &format!("spread:{{{t}}}:*")).await.len();
                if found > 0 {
                    holding.push((n, found));
                }
            }
            holding
        };
        assert_eq!(holding.len(), 1, "tenant {t}: {holding:?}");
        assert_eq!(holding[0].1, 2, "the index and one conversation");
        used.insert(holding[0].0);
    }
    assert!(used.len() > 1, "twelve tenants all on node {used:?}");
}

/// A chain of many pieces, each one script naming the tenant's keys only,
/// is read whole from the tenant's node: its pieces all run there.
#[tokio::test]
async fn a_chain_of_many_pieces_is_read_on_its_tenant_s_node() {
    let cluster = RedisCluster::start();
    let writer = RedisStore::builder(&cluster.url()).connect().await.unwrap();
    let t = tenant("pieces");
    let ids: Vec<String> = (0..1_500).map(|n| format!("resp_{n}")).collect();
    let mut outputs = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let mut record = turn(id, &[]);
        record.parent = n.checked_sub(1).map(|p| ids[p].clone());
        // A few large turns among many small ones: bounded in bytes and in
        // entries both.
        if n % 300 == 7 {
            record.output = format!(r#"[{{"text":"{}"}}]"#, "y".repeat(700_000));
        }
        outputs.push(record.output.clone());
        writer.save(&t, record).await.unwrap();
    }
    let reader = RedisStore::builder(&cluster.url())
        .timeout(Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    let mut nodes = nodes(&cluster).await;
    let before = work(&mut nodes).await;
    let trips = reader.round_trips();
    let chain = reader.chain(&t, &ids[1_499]).await.unwrap().unwrap();
    let pieces = reader.round_trips() - trips;
    assert_eq!(chain.missing, None);
    let read: Vec<(&str, &str)> = chain
        .turns
        .iter()
        .map(|turn| (&*turn.id, &*turn.output))
        .collect();
    let saved: Vec<(&str, &str)> = ids
        .iter()
        .map(String::as_str)
        .zip(outputs.iter().map(String::as_str))
        .collect();
    assert!(read == saved, "the chain read differs from the one saved");
    assert!(pieces >= 4, "read in {pieces} round trips");
    let after = work(&mut nodes).await;
    let busy: Vec<usize> = (0..nodes.len()).filter(|&n| after[n] > before[n]).collect();
    assert_eq!(busy.len(), 1, "pieces ran on nodes {busy:?}");
}

/// The scripts and `HMGET`s each node has run, from `INFO commandstats`.
async fn work(nodes: &mut [MultiplexedConnection]) -> Vec<u64> {
    let mut counts = Vec::new();
    for node in nodes.iter_mut() {
        let node = std::slice::from_mut(node);
        let mut count = 0;
        for command in ["evalsha", "eval", "hmget"] {
            count += calls(node, command).await;
        }
        counts.push(count);
    }
    counts
}

/// One round trip per save whatever the depth, and per chain read that
/// fits in one piece (500 small turns): counted
/// by the store and, for the scripts, by the nodes. A cluster of its own,
/// so that no other test's commands are counted.
#[tokio::test]
async fn one_round_trip_per_chain_and_per_save_at_any_depth() {
    let cluster = RedisCluster::start();
    let store = RedisStore::builder(&cluster.url()).connect().await.unwrap();
    let t = tenant("round-trips");
    let ids: Vec<String> = (0..500).map(|n| format!("resp_{n}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    // Learns the slot layout and loads both scripts on the tenant's node.
    store.save(&t, turn(refs[0], &[])).await.unwrap();
    store.chain(&t, refs[0]).await.unwrap();
    let mut nodes = nodes(&cluster).await;
    for n in 1..500 {
        let before = (store.round_trips(), calls(&mut nodes, "evalsha").await);
        store.save(&t, turn(refs[n], &refs[..n])).await.unwrap();
        assert_eq!(store.round_trips() - before.0, 1, "saving turn {n}");
        if [1, 49, 499].contains(&n) {
            assert_eq!(calls(&mut nodes, "evalsha").await - before.1, 1, "turn {n}");
        }
    }
    // Another process, which has read nothing yet, then the one that saved
    // every turn and keeps them: it is sent none again.
    let other = RedisStore::builder(&cluster.url()).connect().await.unwrap();
    for (reader, fresh) in [(&other, true), (&store, false)] {
        for depth in [1, 50, 500] {
            let (evalsha, eval, hmget) = (
                calls(&mut nodes, "evalsha").await,
                calls(&mut nodes, "eval").await,
                calls(&mut nodes, "hmget").await,
            );
            let before = reader.round_trips();
            let chain = reader.chain(&t, refs[depth - 1]).await.unwrap().unwrap();
            assert_eq!(chain.turns.len(), depth);
            assert_eq!(chain.missing, None);
            assert_eq!(reader.round_trips() - before, 1, "depth {depth}");
            assert_eq!(
                calls(&mut nodes, "evalsha").await - evalsha,
                1,
                "depth {depth}"
            );
            assert_eq!(calls(&mut nodes, "eval").await - eval, 0, "depth {depth}");
            // Inside the script, on the tenant's node, one piece: the ids
            // of the one run, then the turns not kept, one `HMGET` each.
            let hmgets = if fresh { 2 } else { 0 };
            assert_eq!(
                calls(&mut nodes, "hmget").await - hmget,
                hmgets,
                "depth {depth}"
            );
        }
    }
}

/// Made while no node is up, the store fails promptly, then works once the
/// cluster is.
#[tokio::test]
async fn a_store_made_before_the_cluster_works_once_it_is_up() {
    let ports = [free_port(), free_port(), free_port()];
    let url = format!(
        "redis+cluster://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
        ports[0], ports[1], ports[2]
    );
    let store = RedisStore::builder(&url)
        .timeout(Duration::from_secs(1))
        .build()
        .expect("made without connecting");
    let t = tenant("early");
    let started = Instant::now();
    let down = store.save(&t, turn("resp_1", &[])).await;
    assert!(
        matches!(down, Err(StoreError::Unavailable { .. })),
        "{down:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let _cluster = RedisCluster::start_on(ports);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match store.save(&t, turn("resp_1", &[])).await {
            Ok(()) => break,
            Err(e) => assert!(Instant::now() < deadline, "still failing: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    store.save(&t, turn("resp_2", &["resp_1"])).await.unwrap();
    let chain = store.chain(&t, "resp_2").await.unwrap().unwrap();
    assert_eq!(chain.turns.len(), 2);
}
