//! Long and large chains on a real `redis-server`, read in pieces: read
//! back whole and in order, and read without holding the server for other
//! tenants (what a deleted link between two pieces does:
//! `src/redis_store/chain/reads.rs`); and the turns one process keeps of a
//! chain, read again once another process changes them. Run with `--features redis`.

#![cfg(feature = "redis")]

mod common;
mod redis_server;

use std::time::{Duration, Instant};

use common::{ids_of, tenant, turn};
use redis_server::{hset, raw, RedisServer};
use wirebridge_store::{RedisStore, ResponseStore, StoredResponse};

/// A store that waits long enough for a chain of many MiB in a debug
/// build: what is measured here is how long the server is held, not the
/// timeout.
async fn patient(server: &RedisServer) -> RedisStore {
    RedisStore::builder(&server.url())
        .timeout(Duration::from_secs(60))
        .kept_turns(0)
        .connect()
        .await
        .expect("connect")
}

/// Response `n` of a chain, continuing `parent`, its answer `bytes` long
/// and telling which response it is at both ends.
fn big_turn(n: usize, parent: Option<&str>, bytes: usize) -> StoredResponse {
    let id = format!("resp_{n:05}");
    let mut record = turn(&id, &[]);
    record.parent = parent.map(str::to_owned);
    let filler = "x".repeat(bytes);
    record.output = format!(
        r#"[{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{n} {filler} {n}"}}]}}]"#
    );
    record
}

/// Saves a chain of `sizes.len()` responses, each answer as long as its
/// size; their ids and outputs, oldest first.
async fn save_chain(store: &RedisStore, t: &str, sizes: &[usize]) -> Vec<(String, String)> {
    let mut saved: Vec<(String, String)> = Vec::with_capacity(sizes.len());
    for (n, &bytes) in sizes.iter().enumerate() {
        let parent = saved.last().map(|(id, _)| id.as_str());
        let record = big_turn(n, parent, bytes);
        let kept = (record.id.clone(), record.output.clone());
        store.save(t, record).await.expect("saved");
        saved.push(kept);
    }
    saved
}

/// A chain longer than several pieces' entries and larger than several
/// pieces' bytes, with a branch in its middle (so more than one run), is
/// read in several pieces and back as it was saved: every turn, in order.
#[tokio::test]
async fn a_chain_of_many_pieces_reads_back_whole_and_in_order() {
    let server = RedisServer::start();
    let writer = RedisStore::connect(&server.url()).await.unwrap();
    let t = tenant("long");
    // 2,000 small turns, then a few of 1 MiB and more small ones.
    let mut sizes = vec![16; 2_000];
    sizes.extend([1 << 20; 6]);
    sizes.extend(vec![100; 600]);
    let saved = save_chain(&writer, &t, &sizes).await;
    // A branch from turn 1,000: its run starts at a slot of its own.
    let branch = big_turn(90_000, Some(&saved[999].0), 300_000);
    writer.save(&t, branch.clone()).await.unwrap();
    let mut tip = big_turn(90_001, Some(&branch.id), 10);
    tip.id = "resp_tip".into();
    writer.save(&t, tip.clone()).await.unwrap();

    let reader = patient(&server).await;
    let trips = reader.round_trips();
    let chain = reader.chain(&t, &saved.last().unwrap().0).await.unwrap();
    let chain = chain.expect("found");
    // In pieces: 2,606 slots are six pieces of the walk (512 slots at
    // most), and their turns about ten more (512 turns, 4 MiB at most).
    let pieces = reader.round_trips() - trips;
    assert!(pieces >= 8, "read in {pieces} round trips");
    assert_eq!(chain.missing, None);
    assert_eq!(chain.turns.len(), saved.len());
    assert_eq!(chain.ids.len(), saved.len());
    for (n, ((id, output), read)) in saved.iter().zip(&chain.turns).enumerate() {
        assert_eq!(&*read.id, id, "turn {n}");
        assert_eq!(&*chain.ids[n], id, "id {n}");
        assert!(&*read.output == output, "the output of turn {n} differs");
    }

    let chain = reader.chain(&t, "resp_tip").await.unwrap().expect("found");
    let mut expected: Vec<&str> = saved[..1_000].iter().map(|(id, _)| id.as_str()).collect();
    expected.extend([branch.id.as_str(), "resp_tip"]);
    let ids: Vec<&str> = chain.turns.iter().map(|turn| &*turn.id).collect();
    assert_eq!(ids, expected);
    assert!(*chain.turns[1_000].output == branch.output);
}

/// The defect of a chain read in one script: Redis runs one script at a
/// time for every tenant, so while it copied a chain of 100 MiB no other
/// tenant was answered. Read in pieces, another tenant's small read waits
/// for one piece at most: far less than the whole read takes. Compared as
/// a ratio of two times measured together, so a slow machine slows both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenant_is_answered_while_a_large_chain_is_read() {
    let server = RedisServer::start();
    let writer = patient(&server).await;
    let big = tenant("big");
    let saved = save_chain(&writer, &big, &[1 << 20; 110]).await;
    let small = tenant("small");
    writer.save(&small, turn("resp_small", &[])).await.unwrap();

    // Each tenant on a store of its own, as on two replicas: what they
    // share is the server.
    let reader = patient(&server).await;
    let neighbour = patient(&server).await;
    neighbour.get(&small, "resp_small").await.unwrap().unwrap();
    let tip = saved.last().unwrap().0.clone();
    reader.chain(&big, "resp_00000").await.unwrap().unwrap();

    let started = Instant::now();
    let read = tokio::spawn(async move {
        let chain = reader.chain(&big, &tip).await;
        (chain, started.elapsed())
    });
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    while !read.is_finished() {
        let asked = Instant::now();
        let got = neighbour.get(&small, "resp_small").await.unwrap();
        slowest = slowest.max(asked.elapsed());
        assert!(got.is_some());
        answered += 1;
    }
    let (chain, whole) = read.await.unwrap();
    let chain = chain.unwrap().expect("found");
    assert_eq!(chain.turns.len(), saved.len());
    println!(
        "the chain read in {whole:?}; {answered} other reads meanwhile, the slowest {slowest:?}"
    );
    assert!(answered >= 10, "{answered} reads while the chain was read");
    // In one script, the slowest read waited for half the whole read or
    // more; in pieces, for a few hundredths of it.
    assert!(
        slowest * 4 < whole,
        "another tenant waited {slowest:?} during a read of {whole:?}"
    );
}

/// The outputs of a chain's turns, oldest first.
fn outputs(chain: &wirebridge_store::Chain) -> Vec<String> {
    chain.turns.iter().map(|t| t.output.to_string()).collect()
}

/// What one process keeps of a conversation is read again as soon as
/// another changes it: a response saved again in place, one deleted, and
/// the whole conversation gone and made again under the same number.
#[tokio::test]
async fn a_kept_turn_is_read_again_once_another_process_changes_it() {
    let server = RedisServer::start();
    let writer = RedisStore::connect(&server.url()).await.unwrap();
    let reader = RedisStore::connect(&server.url()).await.unwrap();
    let t = tenant("kept");
    for (n, id) in ["resp_1", "resp_2", "resp_3"].iter().enumerate() {
        let ancestors = ["resp_1", "resp_2"];
        writer.save(&t, turn(id, &ancestors[..n])).await.unwrap();
    }
    let first = reader.chain(&t, "resp_3").await.unwrap().unwrap();
    let read = reader.turns_read();
    assert_eq!(read, 3);
    // Read again unchanged: nothing is sent again.
    assert_eq!(reader.chain(&t, "resp_3").await.unwrap(), Some(first));
    assert_eq!(reader.turns_read(), read);

    // Saved again in place, with another answer.
    let mut again = turn("resp_2", &["resp_1"]);
    again.output = r#"[{"type":"message","role":"assistant","content":"changed"}]"#.to_owned();
    writer.save(&t, again).await.unwrap();
    let chain = reader.chain(&t, "resp_3").await.unwrap().unwrap();
    assert!(outputs(&chain)[1].contains("changed"), "{chain:?}");
    assert_eq!(reader.turns_read(), read + 3, "read again in full");

    // Deleted: the chain names it missing.
    assert!(writer.delete(&t, "resp_1").await.unwrap());
    let chain = reader.chain(&t, "resp_3").await.unwrap().unwrap();
    assert_eq!(chain.missing.as_deref(), Some("resp_1"));
    assert_eq!(chain.turns.len(), 2);

    // Gone (as when it expires) and made again: the same ids, in a
    // conversation of the same number, with other answers.
    let mut connection = raw(&server).await;
    let _: () = redis::cmd("FLUSHALL")
        .query_async(&mut connection)
        .await
        .unwrap();
    for (n, id) in ["resp_1", "resp_2", "resp_3"].iter().enumerate() {
        let ancestors = ["resp_1", "resp_2"];
        let mut remade = turn(id, &ancestors[..n]);
        remade.output =
            format!(r#"[{{"type":"message","role":"assistant","content":"remade {id}"}}]"#);
        writer.save(&t, remade).await.unwrap();
    }
    let chain = reader.chain(&t, "resp_3").await.unwrap().unwrap();
    assert_eq!(chain.missing, None);
    for (output, id) in outputs(&chain).iter().zip(["resp_1", "resp_2", "resp_3"]) {
        assert!(output.contains(&format!("remade {id}")), "{output}");
    }
}

/// A server that lost its latest writes (restarted from an older snapshot,
/// or failed over to a replica behind) gives their slots out again, under
/// the same generation: a store that kept what was there reads it again.
#[tokio::test]
async fn slots_given_out_again_after_lost_writes_are_read_again() {
    let server = RedisServer::start();
    let writer = RedisStore::connect(&server.url()).await.unwrap();
    let reader = RedisStore::connect(&server.url()).await.unwrap();
    let t = tenant("lost-writes");
    let ancestors = ["resp_1", "resp_2"];
    for (n, id) in ["resp_1", "resp_2", "resp_3"].iter().enumerate() {
        writer.save(&t, turn(id, &ancestors[..n])).await.unwrap();
    }
    assert_eq!(
        reader
            .chain(&t, "resp_3")
            .await
            .unwrap()
            .unwrap()
            .turns
            .len(),
        3
    );
    // The save of resp_3 is lost, as a snapshot taken before it would have.
    let mut connection = raw(&server).await;
    let conversation = format!("wirebridge:resp:{{{t}}}:c:1");
    let _: () = redis::cmd("HDEL")
        .arg(&conversation)
        .arg(&["i:2", "t:2", "r:2", "n:resp_3"])
        .query_async(&mut connection)
        .await
        .unwrap();
    hset(&mut connection, &conversation, "#", "2").await;
    let _: () = redis::cmd("HDEL")
        .arg(format!("wirebridge:resp:{{{t}}}:x"))
        .arg("i:resp_3")
        .query_async(&mut connection)
        .await
        .unwrap();
    // Another response takes its slot.
    writer
        .save(&t, turn("resp_other", &["resp_1", "resp_2"]))
        .await
        .unwrap();
    let chain = reader.chain(&t, "resp_other").await.unwrap().unwrap();
    assert_eq!(ids_of(&chain), ["resp_1", "resp_2", "resp_other"]);
    assert_eq!(&*chain.turns[2].id, "resp_other");
    assert!(chain.turns[2].output.contains("answer of resp_other"));
}
