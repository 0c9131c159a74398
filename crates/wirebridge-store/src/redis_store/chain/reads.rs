//! Chains read in pieces on a real `redis-server`: what a write between
//! two pieces of one read does to it, piece by piece (the whole reads are
//! in `tests/redis_chains.rs`).

use super::{ChainPieces, Step, PIECE_ENTRIES};
use crate::redis_store::redis_server::RedisServer;
use crate::redis_store::RedisStore;
use crate::{ResponseStore, StoredResponse};

/// More than two pieces' worth of ids.
const LENGTH: usize = PIECE_ENTRIES * 2 + 100;

fn id(n: usize) -> String {
    format!("resp_{n}")
}

fn response(n: usize) -> StoredResponse {
    StoredResponse {
        id: id(n),
        parent: n.checked_sub(1).map(id),
        created_at: 0,
        input: format!(r#"[{{"n":{n}}}]"#),
        output: "[]".into(),
        response: format!(r#"{{"id":"{}"}}"#, id(n)),
    }
}

/// A store on a fresh server, holding a chain of `LENGTH` responses
/// `resp_0`, `resp_1`, … of tenant `t`, keeping none of them in the
/// process.
async fn fixture() -> (RedisServer, RedisStore) {
    let server = RedisServer::start();
    let store = RedisStore::builder(&server.url())
        .kept_turns(0)
        .connect()
        .await
        .expect("connect");
    for n in 0..LENGTH {
        store.save("t", response(n)).await.expect("saved");
    }
    (server, store)
}

async fn first<'s>(store: &'s RedisStore, asked: &'s str) -> ChainPieces<'s> {
    let keys = store.keys("t");
    let pieces = ChainPieces::first(store, &keys, asked, &[]).await;
    pieces.expect("read").expect("a chain")
}

/// The last of `LENGTH`, as the chain read of a store would ask for it.
fn tip() -> String {
    id(LENGTH - 1)
}

#[tokio::test]
async fn a_save_between_pieces_changes_nothing_and_the_read_ends_whole() {
    let (_server, store) = fixture().await;
    let tip = tip();
    let mut pieces = first(&store, &tip).await;
    assert!(pieces.cursor.is_some(), "one piece walked it all");
    // A response added to the conversation leaves the chain as it was.
    store.save("t", response(LENGTH)).await.unwrap();
    let mut steps = 0;
    while pieces.step().await.unwrap() == Step::Read {
        steps += 1;
    }
    // The rest of the walk (two pieces), then the turns (three).
    assert_eq!(steps, 5);
    let read = pieces.finish().unwrap();
    let ids: Vec<String> = read.sent.iter().map(|slot| slot.id.to_string()).collect();
    assert_eq!(ids, (0..LENGTH).map(id).collect::<Vec<_>>());
    assert!(read.sent.iter().all(|slot| slot.turn.is_some()));
}

/// A link deleted between two pieces: the read starts again and names it
/// missing, as one read after the deletion does (the 404 naming
/// `previous_response_id` upstream of the store).
#[tokio::test]
async fn a_link_deleted_between_pieces_is_named_missing_as_before() {
    let (_server, store) = fixture().await;
    let tip = tip();
    // During the walk, then while its turns are read.
    for stop_after in [0, 2, 4] {
        let mut pieces = first(&store, &tip).await;
        for _ in 0..stop_after {
            assert_eq!(pieces.step().await.unwrap(), Step::Read);
        }
        let deleted = id(10 + stop_after);
        assert!(store.delete("t", &deleted).await.unwrap());
        assert_eq!(pieces.step().await.unwrap(), Step::Changed);

        let chain = store.chain("t", &tip).await.unwrap().expect("a chain");
        assert_eq!(chain.missing, Some(deleted.clone()));
        assert_eq!(chain.turns.len(), LENGTH - 11 - stop_after);
        assert_eq!(&*chain.turns[0].id, id(11 + stop_after));
    }
    // The response asked for itself, deleted between pieces: no chain.
    let mut pieces = first(&store, &tip).await;
    assert!(store.delete("t", &tip).await.unwrap());
    assert_eq!(pieces.step().await.unwrap(), Step::Changed);
    assert_eq!(store.chain("t", &tip).await, Ok(None));
}

/// The conversation gone between two pieces (expired) is a change too,
/// not a corrupt conversation: during the walk, and while its turns are
/// read.
#[tokio::test]
async fn a_conversation_gone_between_pieces_is_read_again() {
    for stop_after in [0, 3] {
        let (server, store) = fixture().await;
        let tip = tip();
        let mut pieces = first(&store, &tip).await;
        for _ in 0..stop_after {
            assert_eq!(pieces.step().await.unwrap(), Step::Read);
        }
        let client = redis::Client::open(server.url()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        let conversation = format!("{}1", store.keys("t").conversations());
        let _: () = redis::cmd("DEL")
            .arg(&conversation)
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(pieces.step().await.unwrap(), Step::Changed);
        assert_eq!(store.chain("t", &tip).await, Ok(None));
    }
}

/// A chain that changes on every read fails as unavailable after a few
/// tries, as a page of conversation items does.
#[tokio::test]
async fn a_chain_that_keeps_changing_fails_as_unavailable() {
    let (_server, store) = fixture().await;
    let tip = tip();
    let mut changes = 0;
    for attempt in 0..super::READ_ATTEMPTS {
        let mut pieces = first(&store, &tip).await;
        // Saved again in place: the same chain, another generation.
        store.save("t", response(5 + attempt)).await.unwrap();
        changes += usize::from(pieces.step().await.unwrap() == Step::Changed);
    }
    assert_eq!(changes, super::READ_ATTEMPTS);
    // Nothing changes it now: read whole.
    let chain = store.chain("t", &tip).await.unwrap().expect("a chain");
    assert_eq!(chain.turns.len(), LENGTH);
}
