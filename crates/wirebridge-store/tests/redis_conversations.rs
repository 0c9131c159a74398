//! `RedisStore`'s conversations on a real `redis-server`: their keys, their
//! TTL (set by every write, on every key, and by no read), what a server out
//! of memory refuses, values that cannot be read, and the round trips a
//! read and an append take (the shared suite: `redis.rs`). Run with
//! `--features redis`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use common::conversations::{conversation, item};
use common::tenant;
use redis::aio::MultiplexedConnection;
use redis_server::{calls, RedisServer};
use wirebridge_store::{
    ConversationStore, ItemQuery, Lookup, Order, RedisStore, StoreError, StoredItem,
};

/// A fresh server, a store on it, and a plain connection to look at what
/// the store wrote.
async fn fixture() -> (RedisServer, RedisStore, MultiplexedConnection) {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    let client = redis::Client::open(server.url()).unwrap();
    let connection = client.get_multiplexed_async_connection().await.unwrap();
    (server, store, connection)
}

/// Runs one command on the plain connection.
async fn command<T: redis::FromRedisValue>(
    connection: &mut MultiplexedConnection,
    args: &[&str],
) -> T {
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query_async(connection).await.unwrap()
}

/// The TTL of each of `keys`, in seconds.
async fn ttls(connection: &mut MultiplexedConnection, keys: &[String]) -> Vec<i64> {
    let mut ttls = Vec::new();
    for key in keys {
        ttls.push(command(connection, &["TTL", key]).await);
    }
    ttls
}

/// The keys of a conversation, what they hold, and the TTL every write
/// sets on all of them (and no read renews).
#[tokio::test]
async fn a_conversation_is_three_keys_of_its_tenant_with_the_store_s_ttl() {
    let (_server, store, mut connection) = fixture().await;
    let store = store
        .prefix("test:ns")
        .ttl(std::time::Duration::from_secs(90));
    let t = tenant("layout");
    let id = "conv:{x}%";
    store
        .create_conversation(&t, conversation(id, "{}"), vec![item("a"), item("b")])
        .await
        .unwrap();
    store
        .create_conversation(&t, conversation("conv_empty", "{}"), Vec::new())
        .await
        .unwrap();
    let base = format!("test:ns:{{{t}}}:v:");
    let keys: Vec<String> = ["", ":i", ":o"]
        .iter()
        .map(|suffix| format!("{base}conv%3A%7Bx%7D%25{suffix}"))
        .collect();
    let mut all: Vec<String> = command(&mut connection, &["KEYS", "*"]).await;
    all.sort();
    let mut expected = keys.clone();
    expected.push(format!("{base}conv_empty"));
    assert_eq!(all, expected, "no items, no list nor hash of items");
    for (key, kind) in keys.iter().zip(["hash", "hash", "list"]) {
        let found: String = command(&mut connection, &["TYPE", key]).await;
        assert_eq!(found, kind, "{key}");
    }
    let record: Vec<String> = command(&mut connection, &["HGETALL", &keys[0]]).await;
    assert_eq!(
        record[..6],
        ["v", "1", "created_at", "1700000000", "metadata", "{}"]
    );
    // The generation: the first, with the server's time.
    assert_eq!(record.len(), 8, "{record:?}");
    assert_eq!(record[6], "g");
    let generation: Vec<&str> = record[7].split('-').collect();
    assert_eq!(generation.len(), 3, "{record:?}");
    assert_eq!(generation[0], "1");
    assert!(generation[1..].iter().all(|n| n.parse::<u64>().is_ok()));
    let order: Vec<String> = command(&mut connection, &["LRANGE", &keys[2], "0", "-1"]).await;
    assert_eq!(order, ["a", "b"]);
    for ttl in ttls(&mut connection, &keys).await {
        assert!((85..=90).contains(&ttl), "{ttl}");
    }

    // Reads renew nothing; every write sets the TTL on every key again.
    let shorten = |connection: &mut MultiplexedConnection| {
        let (mut connection, keys) = (connection.clone(), keys.clone());
        async move {
            for key in &keys {
                let _: i64 = command(&mut connection, &["EXPIRE", key, "50"]).await;
            }
        }
    };
    shorten(&mut connection).await;
    store.conversation(&t, id).await.unwrap().unwrap();
    store.item(&t, id, "a").await.unwrap();
    store.list_items(&t, id, &ItemQuery::all()).await.unwrap();
    for ttl in ttls(&mut connection, &keys).await {
        assert!((45..=50).contains(&ttl), "read: {ttl}");
    }
    for write in ["update", "append", "append nothing new", "delete an item"] {
        shorten(&mut connection).await;
        match write {
            "update" => {
                let metadata = r#"{"k":"v"}"#.to_owned();
                store.update_conversation(&t, id, metadata).await.unwrap();
            }
            "append" => assert!(store.append_items(&t, id, vec![item("c")]).await.unwrap()),
            "append nothing new" => {
                assert!(store.append_items(&t, id, vec![item("a")]).await.unwrap());
            }
            _ => assert!(matches!(
                store.delete_item(&t, id, "b").await.unwrap(),
                Lookup::Found(_)
            )),
        }
        for ttl in ttls(&mut connection, &keys).await {
            assert!((85..=90).contains(&ttl), "{write}: {ttl}");
        }
    }
    let order: Vec<String> = command(&mut connection, &["LRANGE", &keys[2], "0", "-1"]).await;
    assert_eq!(order, ["a", "c"]);
    let held: i64 = command(&mut connection, &["HLEN", &keys[1]]).await;
    assert_eq!(held, 2);

    // Deleting an item that is not there changes nothing, TTL included.
    shorten(&mut connection).await;
    assert_eq!(
        store.delete_item(&t, id, "b").await.unwrap(),
        Lookup::NoItem
    );
    for ttl in ttls(&mut connection, &keys).await {
        assert!((45..=50).contains(&ttl), "no item: {ttl}");
    }
    // Creating it again replaces it, items and all; deleting it takes every
    // key.
    store
        .create_conversation(&t, conversation(id, "{}"), vec![item("z")])
        .await
        .unwrap();
    let order: Vec<String> = command(&mut connection, &["LRANGE", &keys[2], "0", "-1"]).await;
    assert_eq!(order, ["z"]);
    assert!(store.delete_conversation(&t, id).await.unwrap());
    let left: Vec<String> = command(&mut connection, &["KEYS", &format!("{base}conv%3A*")]).await;
    assert!(left.is_empty(), "{left:?}");
}

/// A write the server refuses for want of memory is `NotKept` and writes
/// nothing; deletes still work.
#[tokio::test]
async fn writes_refused_for_memory_are_not_kept_and_write_nothing() {
    let server =
        RedisServer::start_with(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let t = tenant("full");
    let big = |id: &str| {
        let mut big = item(id);
        big.item = format!(r#"{{"id":"{id}","text":"{}"}}"#, "x".repeat(256 << 10));
        big
    };
    let mut kept = Vec::new();
    let refused = loop {
        let id = format!("conv_{}", kept.len());
        match store
            .create_conversation(&t, conversation(&id, "{}"), vec![big("first")])
            .await
        {
            Ok(()) => kept.push(id),
            Err(e) => break e,
        }
        assert!(kept.len() < 100, "25 MiB kept under a 4 MiB maxmemory");
    };
    let StoreError::NotKept(message) = &refused else {
        panic!("{refused:?}");
    };
    assert!(message.contains("out of memory"), "{message}");
    let refused_id = format!("conv_{}", kept.len());
    assert_eq!(store.conversation(&t, &refused_id).await.unwrap(), None);

    let appended = store.append_items(&t, &kept[0], vec![big("second")]).await;
    assert!(
        matches!(appended, Err(StoreError::NotKept(_))),
        "{appended:?}"
    );
    let Lookup::Found(page) = store
        .list_items(&t, &kept[0], &ItemQuery::all())
        .await
        .unwrap()
    else {
        panic!("still there")
    };
    assert_eq!(page.items.len(), 1, "the refused append wrote nothing");
    // Deleting frees memory, and is allowed.
    assert!(matches!(
        store.delete_item(&t, &kept[0], "first").await,
        Ok(Lookup::Found(_))
    ));
    assert!(store.delete_conversation(&t, &kept[1]).await.unwrap());
}

/// Values the store cannot read are `Corrupt`, and can still be deleted.
#[tokio::test]
async fn unreadable_values_are_corrupt_not_panics() {
    let (_server, store, mut connection) = fixture().await;
    let t = tenant("corrupt");
    for id in ["conv_version", "conv_lost_item", "conv_type"] {
        store
            .create_conversation(&t, conversation(id, "{}"), vec![item("a")])
            .await
            .unwrap();
    }
    let key = |id: &str| format!("wirebridge:resp:{{{t}}}:v:{id}");
    let _: i64 = command(&mut connection, &["HSET", &key("conv_version"), "v", "9"]).await;
    let _: i64 = command(
        &mut connection,
        &["RPUSH", &key("conv_lost_item:o"), "ghost"],
    )
    .await;
    let _: i64 = command(&mut connection, &["DEL", &key("conv_type:i")]).await;
    let _: () = command(&mut connection, &["SET", &key("conv_type:i"), "x"]).await;

    let read = store.conversation(&t, "conv_version").await;
    assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
    let listed = store
        .list_items(&t, "conv_lost_item", &ItemQuery::all())
        .await;
    assert!(
        matches!(&listed, Err(StoreError::Corrupt(m)) if m.contains("ghost")),
        "{listed:?}"
    );
    let listed = store.list_items(&t, "conv_type", &ItemQuery::all()).await;
    assert!(matches!(listed, Err(StoreError::Corrupt(_))), "{listed:?}");
    let read = store.item(&t, "conv_type", "a").await;
    assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
    // Each can still be deleted.
    for id in ["conv_version", "conv_lost_item", "conv_type"] {
        assert!(store.delete_conversation(&t, id).await.unwrap(), "{id}");
    }
}

/// The calls of the commands a conversation read may make, in this order:
/// `EVALSHA`, `EVAL`, `LPOS`, `LRANGE`, `HMGET`.
async fn read_calls(connection: &mut MultiplexedConnection) -> Vec<u64> {
    let mut counts = Vec::new();
    for command in ["evalsha", "eval", "lpos", "lrange", "hmget"] {
        counts.push(calls(connection, command).await);
    }
    counts
}

/// Appending to a 1,000-item conversation is one round trip, and so is a
/// page after one of its items; listing it whole is one round trip per 512
/// items: counted by the store and, for the scripts, by the server, which
/// finds the page's place itself (`LPOS`) rather than sending the
/// conversation back.
#[tokio::test]
async fn one_round_trip_per_append_and_per_piece_of_a_read() {
    let (_server, store, mut connection) = fixture().await;
    let t = tenant("conversation-round-trips");
    let items: Vec<StoredItem> = (0..1_000).map(|n| item(&format!("msg_{n}"))).collect();
    let conv = conversation("conv_1", "{}");
    // Loads the scripts used below on the server.
    store
        .create_conversation(&t, conv, Vec::new())
        .await
        .unwrap();
    store
        .append_items(&t, "conv_1", items[..2].to_vec())
        .await
        .unwrap();
    store
        .list_items(&t, "conv_1", &ItemQuery::all())
        .await
        .unwrap();
    for (added, batch) in [
        (998, &items[2..]),
        (1, &[item("msg_1000"), item("msg_5")][..]),
    ] {
        let before = (store.round_trips(), calls(&mut connection, "evalsha").await);
        assert!(store
            .append_items(&t, "conv_1", batch.to_vec())
            .await
            .unwrap());
        assert_eq!(store.round_trips() - before.0, 1, "appending {added}");
        assert_eq!(calls(&mut connection, "evalsha").await - before.1, 1);
    }
    let after_990 = ItemQuery {
        after: Some("msg_990".to_owned()),
        limit: 5,
        order: Order::Descending,
    };
    // Listing all: two pieces (512 items, then 489), each a range of ids and
    // their items; a page after an item: its place, then one range and its
    // items.
    for (query, expected) in [
        (ItemQuery::all(), [2, 0, 0, 2, 2]),
        (after_990, [1, 0, 1, 1, 1]),
    ] {
        let before = (store.round_trips(), read_calls(&mut connection).await);
        let Lookup::Found(page) = store.list_items(&t, "conv_1", &query).await.unwrap() else {
            panic!("the conversation and the item are there")
        };
        assert_eq!(store.round_trips() - before.0, expected[0], "{query:?}");
        let now = read_calls(&mut connection).await;
        let made: Vec<u64> = now.iter().zip(&before.1).map(|(n, b)| n - b).collect();
        assert_eq!(
            made, expected,
            "evalsha, eval, lpos, lrange, hmget: {query:?}"
        );
        let ids: Vec<&str> = page.items.iter().map(|item| item.id.as_str()).collect();
        if query.after.is_none() {
            assert_eq!((ids.len(), page.has_more), (1_001, false));
            assert_eq!(
                (ids[0], ids[999], ids[1_000]),
                ("msg_0", "msg_999", "msg_1000")
            );
            assert_eq!(page.items[999], items[999]);
        } else {
            assert_eq!(ids, ["msg_989", "msg_988", "msg_987", "msg_986", "msg_985"]);
            assert!(page.has_more);
        }
    }
}

/// An item of `bytes` bytes, a JSON object.
fn sized(id: &str, bytes: usize) -> StoredItem {
    let mut item = format!(r#"{{"id":"{id}","text":""#);
    let pad = bytes - item.len() - 2;
    item.push_str(&"x".repeat(pad));
    item.push_str("\"}");
    assert_eq!(item.len(), bytes);
    StoredItem {
        id: id.to_owned(),
        item,
    }
}

/// A conversation of 10 items of 300,000 bytes is read in pieces of about
/// 1 MiB, each one script on the server (which runs nothing else while
/// one runs): 4 items (the fourth takes a piece past 1 MiB), 4, then 2. A
/// piece that goes on is written back in the order the page asked for.
#[tokio::test]
async fn a_long_conversation_is_read_in_pieces_of_bounded_bytes() {
    let (_server, store, mut connection) = fixture().await;
    let t = tenant("conversation-pieces");
    let items: Vec<StoredItem> = (0..10)
        .map(|n| sized(&format!("big_{n}"), 300_000))
        .collect();
    store
        .create_conversation(&t, conversation("conv_1", "{}"), items.clone())
        .await
        .unwrap();
    // Loads the script on the server.
    let one = ItemQuery {
        limit: 1,
        ..ItemQuery::all()
    };
    store.list_items(&t, "conv_1", &one).await.unwrap();
    let mut newest_first = items.clone();
    newest_first.reverse();
    for (order, expected) in [
        (Order::Ascending, &items),
        (Order::Descending, &newest_first),
    ] {
        let query = ItemQuery {
            order,
            ..ItemQuery::all()
        };
        let before = (store.round_trips(), read_calls(&mut connection).await);
        let Lookup::Found(page) = store.list_items(&t, "conv_1", &query).await.unwrap() else {
            panic!("the conversation is there")
        };
        assert_eq!(store.round_trips() - before.0, 3, "{order:?}");
        let now = read_calls(&mut connection).await;
        let made: Vec<u64> = now.iter().zip(&before.1).map(|(n, b)| n - b).collect();
        // Scripts, loaded once; one range of ids and one HMGET per piece.
        assert_eq!(made, [3, 0, 0, 3, 3], "{order:?}");
        assert_eq!(&page.items, expected);
        assert!(!page.has_more);
    }
    // A page of 5 after the second item: 4 items, then 1.
    let query = ItemQuery {
        after: Some("big_1".to_owned()),
        limit: 5,
        order: Order::Ascending,
    };
    let before = store.round_trips();
    let Lookup::Found(page) = store.list_items(&t, "conv_1", &query).await.unwrap() else {
        panic!("the conversation is there")
    };
    assert_eq!(store.round_trips() - before, 2);
    assert_eq!(page.items, items[2..7]);
    assert!(page.has_more);
}
