use super::*;

fn turn(id: &str) -> StoredTurn {
    StoredTurn {
        id: id.into(),
        input: format!(r#"[{{"in":"{id}"}}]"#).into(),
        output: "[]".into(),
    }
}

fn slot(id: &str) -> KeptSlot {
    KeptSlot {
        id: id.into(),
        turn: Some(turn(id)),
    }
}

/// A linear chain of `ids` in conversation "1", the first `left_out`
/// slots left out.
fn read(generation: &str, ids: &[&str], left_out: usize) -> ChainRead {
    ChainRead {
        conversation: 1,
        generation: generation.into(),
        left_out,
        lead: None,
        runs: vec![(0, ids.len() - 1)],
        sent: ids[left_out..].iter().map(|id| slot(id)).collect(),
    }
}

fn ids(chain: &Chain) -> Vec<&str> {
    chain.ids.iter().map(|id| &**id).collect()
}

#[test]
fn a_chain_read_again_takes_what_it_left_out_from_what_is_kept() {
    let kept = KeptTurns::new(1 << 20);
    assert_eq!(kept.known("t", "b"), []);
    let chain = kept.chain("t", read("g1", &["a", "b"], 0)).unwrap();
    assert_eq!(ids(&chain), ["a", "b"]);
    let known = &kept.known("t", "b")[0];
    assert_eq!((known.conversation, known.slots), (1, 2));
    // A response it has not seen is looked for in what it used last.
    assert_eq!(kept.known("t", "resp_elsewhere")[0], *known);
    // The next turn: two slots left out, one sent.
    let chain = kept.chain("t", read("g1", &["a", "b", "c"], 2)).unwrap();
    assert_eq!(ids(&chain), ["a", "b", "c"]);
    assert_eq!(chain.turns.len(), 3);
    assert_eq!(&*chain.turns[0].input, r#"[{"in":"a"}]"#);
    assert_eq!(chain.missing, None);
    // Another tenant keeps nothing of it.
    assert_eq!(kept.known("u", "b"), []);
}

#[test]
fn slots_left_out_at_a_generation_no_longer_kept_are_read_again() {
    let kept = KeptTurns::new(1 << 20);
    kept.chain("t", read("g1", &["a", "b"], 0)).unwrap();
    // Another read found the conversation changed meanwhile.
    kept.chain("t", read("g2", &["a", "x"], 0)).unwrap();
    assert!(kept.chain("t", read("g1", &["a", "b", "c"], 2)).is_none());
    // A save of another generation replaces what was kept.
    kept.saved("t", 1, "g3", 2, turn("c"));
    assert_eq!(kept.known("t", "x"), []);
    assert_eq!(kept.known("t", "c"), [], "slot 2 alone is no prefix");
}

#[test]
fn saves_keep_what_a_later_read_leaves_out() {
    let kept = KeptTurns::new(1 << 20);
    for (slot, id) in ["a", "b", "c"].into_iter().enumerate() {
        kept.saved("t", 1, "g1", slot, turn(id));
    }
    let known = &kept.known("t", "c")[0];
    assert_eq!((known.generation.as_str(), known.slots), ("g1", 3));
    let chain = kept.chain("t", read("g1", &["a", "b", "c"], 3)).unwrap();
    assert_eq!(ids(&chain), ["a", "b", "c"]);
}

#[test]
fn a_deleted_turn_is_where_the_chain_s_turns_begin() {
    let kept = KeptTurns::new(1 << 20);
    let mut read = read("g1", &["a", "b", "c"], 0);
    read.sent[1].turn = None;
    let chain = kept.chain("t", read).unwrap();
    assert_eq!(chain.turns.len(), 1);
    assert_eq!(chain.missing.as_deref(), Some("b"));
    let mut gone = self::read("g2", &["a"], 0);
    gone.sent[0].turn = None;
    assert!(kept.chain("t", gone).is_none(), "its own turn is gone");
}

#[test]
fn what_is_kept_stays_within_its_bound() {
    let one = slot("resp_0").bytes() + std::mem::size_of::<Option<KeptSlot>>();
    let kept = KeptTurns::new(3 * one);
    kept.chain("t", read("g", &["resp_0", "resp_1"], 0))
        .unwrap();
    let mut other = read("g", &["resp_2", "resp_3"], 0);
    other.conversation = 2;
    kept.chain("t", other).unwrap();
    // The conversation used longest ago went.
    assert!(kept.bytes() <= 3 * one);
    assert_eq!(kept.known("t", "resp_1").len(), 1, "the other conversation");
    assert_eq!(kept.known("t", "resp_3")[0].conversation, 2);
    // Keeping nothing still reads chains.
    let none = KeptTurns::new(0);
    let chain = none.chain("t", read("g", &["a", "b"], 0)).unwrap();
    assert_eq!(ids(&chain), ["a", "b"]);
    assert_eq!((none.known("t", "b"), none.bytes()), (vec![], 0));
}

#[test]
fn a_conversation_without_a_generation_is_not_kept() {
    let kept = KeptTurns::new(1 << 20);
    let chain = kept.chain("t", read("", &["a", "b"], 0)).unwrap();
    assert_eq!(ids(&chain), ["a", "b"]);
    assert_eq!(kept.known("t", "b"), []);
    assert_eq!(kept.bytes(), 0);
}

#[test]
fn the_bytes_kept_are_counted_once_and_the_slots_list_counts() {
    let kept = KeptTurns::new(1 << 20);
    kept.chain("t", read("g", &["a", "b"], 0)).unwrap();
    let two = kept.bytes();
    // Read again in full, the same slots replace themselves.
    kept.chain("t", read("g", &["a", "b"], 0)).unwrap();
    kept.saved("t", 1, "g", 1, turn("b"));
    assert_eq!(kept.bytes(), two);
    // A slot far along costs the list up to it.
    let far = KeptTurns::new(1 << 20);
    far.saved("t", 1, "g", 9_999, turn("z"));
    assert!(far.bytes() >= 10_000 * std::mem::size_of::<Option<KeptSlot>>());
    // Beyond the bound it is not kept at all.
    let small = KeptTurns::new(1 << 16);
    small.saved("t", 1, "g", 9_999, turn("z"));
    assert_eq!((small.bytes(), small.known("t", "z")), (0, vec![]));
}
