//! Reads in pieces on a real `redis-server`: what a write between two
//! pieces of one read does to it, piece by piece (the suite of
//! `tests/redis_conversations.rs` reads whole pages only).

use super::{Items, Piece, PIECE_ITEMS};
use crate::conversation::{ConversationStore, ItemQuery, Order, StoredConversation, StoredItem};
use crate::redis_store::redis_server::RedisServer;
use crate::redis_store::RedisStore;

/// More than two pieces' worth.
const LENGTH: usize = PIECE_ITEMS * 2 + 100;

fn item(id: &str) -> StoredItem {
    StoredItem {
        id: id.to_owned(),
        item: format!(r#"{{"id":"{id}"}}"#),
    }
}

/// A store on a fresh server, holding conversation `c` of tenant `t`:
/// `LENGTH` items `i0`, `i1`, …
async fn fixture() -> (RedisServer, RedisStore, [String; 3]) {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    create(&store).await;
    let keys = store.conversation_keys("t", "c").all();
    (server, store, keys)
}

async fn create(store: &RedisStore) {
    let conversation = StoredConversation {
        id: "c".into(),
        created_at: 0,
        metadata: "{}".into(),
    };
    let items = (0..LENGTH).map(|n| item(&format!("i{n}"))).collect();
    store
        .create_conversation("t", conversation, items)
        .await
        .expect("created");
}

async fn first(store: &RedisStore, keys: &[String]) -> Items {
    match store.first_piece(keys, "c", &ItemQuery::all()).await {
        Ok(Some(Piece::Items(piece))) => piece,
        other => panic!("{other:?}"),
    }
}

async fn next(store: &RedisStore, keys: &[String], previous: &Items) -> Option<Items> {
    store
        .next_piece(keys, "c", Order::Ascending, previous)
        .await
        .expect("read")
}

#[tokio::test]
async fn an_append_between_pieces_moves_nothing_and_the_read_ends_where_it_began() {
    let (_server, store, keys) = fixture().await;
    let mut piece = first(&store, &keys).await;
    assert_eq!(piece.items.len(), PIECE_ITEMS);
    let appended = store.append_items("t", "c", vec![item("late")]).await;
    assert_eq!(appended, Ok(true));
    let mut ids: Vec<String> = piece.items.iter().map(|item| item.id.clone()).collect();
    while piece.next.is_some() {
        piece = next(&store, &keys, &piece).await.expect("not moved");
        ids.extend(piece.items.iter().map(|item| item.id.clone()));
    }
    let expected: Vec<String> = (0..LENGTH).map(|n| format!("i{n}")).collect();
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn deleting_an_item_between_pieces_makes_the_read_start_again() {
    let (_server, store, keys) = fixture().await;
    let piece = first(&store, &keys).await;
    // Every item after i3 moves one place: the next piece would skip one.
    assert!(matches!(
        store.delete_item("t", "c", "i3").await,
        Ok(crate::Lookup::Found(_))
    ));
    assert!(next(&store, &keys, &piece).await.is_none(), "read on");
    // Read from the start, it is whole.
    let piece = first(&store, &keys).await;
    assert_eq!(piece.items[3].id, "i4");
    assert_eq!(
        next(&store, &keys, &piece).await.map(|p| p.items.len()),
        Some(PIECE_ITEMS)
    );
}

#[tokio::test]
async fn replacing_or_deleting_the_conversation_between_pieces_makes_the_read_start_again() {
    let (_server, store, keys) = fixture().await;
    let piece = first(&store, &keys).await;
    // The same items in the same places, but another conversation: the
    // read must not join the two.
    create(&store).await;
    assert!(next(&store, &keys, &piece).await.is_none(), "read on");
    let piece = first(&store, &keys).await;
    assert_eq!(store.delete_conversation("t", "c").await, Ok(true));
    assert!(next(&store, &keys, &piece).await.is_none(), "read on");
}
