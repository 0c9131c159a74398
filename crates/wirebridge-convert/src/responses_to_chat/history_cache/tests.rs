//! The cache's bound, isolation and output.

use super::*;

fn turn(len: usize) -> Arc<CachedTurn> {
    Arc::new(CachedTurn {
        messages: "x".repeat(len),
        message_count: 1,
        item_count: 1,
        withheld: Vec::new(),
        losses: Vec::new(),
        call_ids: Vec::new(),
        last_user: None,
        spliceable: true,
    })
}

fn key<'k>(id: &'k str, output: &'k str) -> TurnKey<'k> {
    TurnKey {
        scope: "tenant",
        fingerprint: 7,
        start: 0,
        id,
        input: "[]",
        output,
        shared: None,
    }
}

#[test]
fn the_turns_used_longest_ago_go_first_and_the_bound_holds() {
    let one = turn(1000).bytes() + "tenant".len() + "a".len() + 4;
    let cache = HistoryCache::new(3 * one);
    for id in ["a", "b", "c"] {
        cache.insert(&key(id, "[]"), turn(1000));
    }
    assert_eq!(cache.bytes(), 3 * one);
    assert!(cache.get(&key("a", "[]")).is_some());
    // Over the bound: the turns used longest ago go, down to seven
    // eighths of it (b, then c: a was read after them).
    cache.insert(&key("d", "[]"), turn(1000));
    assert_eq!(cache.bytes(), 2 * one);
    for (id, kept) in [("a", true), ("b", false), ("c", false), ("d", true)] {
        assert_eq!(cache.get(&key(id, "[]")).is_some(), kept, "{id}");
    }
    // A turn larger than the whole cache is not kept.
    cache.insert(&key("e", "[]"), turn(4 * one));
    assert!(cache.get(&key("e", "[]")).is_none());
    assert_eq!(cache.bytes(), 2 * one);
}

#[test]
fn its_debug_output_holds_no_conversation() {
    let cache = HistoryCache::new(1 << 20);
    cache.insert(&key("a", r#"[{"text":"a secret"}]"#), turn(10));
    let shown = format!("{cache:?}");
    assert!(
        !shown.contains("secret") && !shown.contains("tenant"),
        "{shown}"
    );
    assert!(shown.contains("misses: 1"), "{shown}");
}

#[test]
fn a_lookup_finds_only_its_own_turn() {
    let cache = HistoryCache::new(1 << 20);
    cache.insert(&key("a", r#"[{"id":"x"}]"#), turn(10));
    assert!(cache.get(&key("a", r#"[{"id":"x"}]"#)).is_some());
    // Saved again, the same length, another content.
    assert!(cache.get(&key("a", r#"[{"id":"y"}]"#)).is_none());
    // Another length.
    assert!(cache.get(&key("a", "[]")).is_none());
    // Another tenant, place or fingerprint.
    let mut other = key("a", r#"[{"id":"x"}]"#);
    other.scope = "tenant2";
    assert!(cache.get(&other).is_none());
    other.scope = "tenant";
    other.start = 1;
    assert!(cache.get(&other).is_none());
    other.start = 0;
    other.fingerprint = 8;
    assert!(cache.get(&other).is_none());
    other.fingerprint = 7;
    assert!(cache.get(&other).is_some());
}

/// A conversation of `depth` turns as a store shares it.
fn shared_turns(depth: usize) -> Vec<[Arc<str>; 3]> {
    (0..depth)
        .map(|t| {
            [
                format!("resp_{t}").into(),
                format!(r#"[{{"type":"message","id":"in_{t}","role":"user","content":"q{t}"}}]"#)
                    .into(),
                format!(r#"[{{"type":"message","id":"out_{t}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"a{t}","annotations":[]}}]}}]"#)
                    .into(),
            ]
        })
        .collect()
}

/// Translates a request continuing `turns` through `cache`; its messages.
fn continue_shared(cache: &HistoryCache, turns: &[[Arc<str>; 3]]) -> serde_json::Value {
    use crate::responses_to_chat::{History, Options, ParsedRequest};
    let arrays = turns.iter().flat_map(|[_, i, o]| [&**i, &**o]);
    let given = turns
        .iter()
        .map(|[id, input, output]| SharedTurn { id, input, output });
    let history = History::new("prev", arrays).with_shared_cache(cache, "tenant", given);
    let body = br#"{"model":"m","previous_response_id":"prev","input":"next"}"#;
    let translated = ParsedRequest::parse(body)
        .unwrap()
        .translate(&history, &Options::default())
        .unwrap();
    let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
    chat["messages"].clone()
}

/// What the cache counts, against what it holds.
fn counted_and_held(cache: &HistoryCache) -> (usize, usize) {
    let kept = cache.lock();
    let held = kept.turns.values().map(|e| e.bytes).sum::<usize>()
        + kept.runs.values().map(|r| r.bytes).sum::<usize>();
    (kept.bytes, held)
}

#[test]
fn the_next_request_takes_the_turns_the_last_spliced_without_looking_each_up() {
    let cache = HistoryCache::new(1 << 20);
    let turns = shared_turns(4);
    continue_shared(&cache, &turns[..3]);
    assert_eq!((cache.misses(), cache.hits()), (3, 0));
    assert_eq!(cache.lock().runs.len(), 1);
    // With every turn's own entry gone, the run alone is enough: the next
    // request, a turn deeper, finds the first three in it and translates
    // only the fourth.
    let mut kept = cache.lock();
    let gone: usize = kept.turns.drain().map(|(_, entry)| entry.bytes).sum();
    kept.bytes -= gone;
    drop(kept);
    let messages = continue_shared(&cache, &turns);
    assert_eq!((cache.misses(), cache.hits()), (4, 3));
    assert_eq!(messages[7]["content"], "a3");
    assert_eq!(messages[8]["content"], "next");
    // It gave the run back a turn longer, under the fourth's id.
    let kept = cache.lock();
    assert_eq!(kept.runs.len(), 1);
    assert_eq!(kept.runs.values().next().unwrap().len(), 4);
    drop(kept);
    let (counted, held) = counted_and_held(&cache);
    assert_eq!(counted, held);
}

#[test]
fn a_run_is_cut_where_a_turn_was_saved_again_and_the_rest_looked_up() {
    let cache = HistoryCache::new(1 << 20);
    let mut turns = shared_turns(3);
    continue_shared(&cache, &turns);
    // The last turn saved again with another answer, in a new allocation.
    turns[2][2] = turns[2][2].replace("a2", "another").into();
    let messages = continue_shared(&cache, &turns);
    assert_eq!(messages[5]["content"], "another");
    // The first two found on their own, the third translated again.
    assert_eq!((cache.misses(), cache.hits()), (4, 2));
    let kept = cache.lock();
    assert_eq!(kept.runs.len(), 1);
    let run = kept.runs.values().next().unwrap();
    assert!(run.turns().all(|turn| turn.spliceable) && run.len() == 3);
    drop(kept);
    let (counted, held) = counted_and_held(&cache);
    assert_eq!(counted, held);
}

#[test]
fn runs_count_against_the_bound_and_go_as_turns_do() {
    let turns = shared_turns(40);
    let probe = HistoryCache::new(1 << 20);
    continue_shared(&probe, &turns);
    let (whole, _) = counted_and_held(&probe);
    // Room for about half of it: the turns and runs used longest ago go.
    let cache = HistoryCache::new(whole / 2);
    for depth in 1..=turns.len() {
        continue_shared(&cache, &turns[..depth]);
        let (counted, held) = counted_and_held(&cache);
        assert_eq!(counted, held, "depth {depth}");
        assert!(
            counted <= whole / 2,
            "depth {depth}: {counted} > {}",
            whole / 2
        );
    }
}

/// Translates `body` continuing `turns`, through `cache` when given (else
/// whole); the Chat body and the reasoning withheld.
fn translated(
    cache: Option<&HistoryCache>,
    turns: &[[Arc<str>; 3]],
    body: &str,
    options: &crate::responses_to_chat::Options,
) -> String {
    use crate::responses_to_chat::{History, ParsedRequest};
    let arrays = turns.iter().flat_map(|[_, i, o]| [&**i, &**o]);
    let mut history = History::new("prev", arrays);
    if let Some(cache) = cache {
        let given = turns
            .iter()
            .map(|[id, input, output]| SharedTurn { id, input, output });
        history = history.with_shared_cache(cache, "tenant", given);
    }
    let translated = ParsedRequest::parse(body.as_bytes())
        .unwrap()
        .translate(&history, options)
        .unwrap();
    format!(
        "{}\n{:?}",
        String::from_utf8(translated.body).unwrap(),
        translated.context.echo.input_transformations
    )
}

/// Reasoning replayed for the current turn only: the stored turns from
/// the last user message on are read with the request, and the run keeps
/// only those before it, whichever request finds where the turn starts.
#[test]
fn a_run_splices_only_the_turns_before_the_current_one_when_reasoning_is_replayed() {
    let mut options = crate::responses_to_chat::Options::default();
    options.profile.replay_reasoning = true;
    let user =
        |t: usize| format!(r#"{{"type":"message","id":"in_{t}","role":"user","content":"q{t}"}}"#);
    let answer = |t: usize| {
        format!(
            r#"{{"type":"message","id":"out_{t}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"a{t}","annotations":[]}}]}}"#
        )
    };
    let think = |t: usize| {
        format!(
            r#"{{"type":"reasoning","id":"rs_{t}","summary":[{{"type":"summary_text","text":"thinking {t}"}}]}}"#
        )
    };
    let call = |t: usize| {
        format!(
            r#"{{"type":"function_call","id":"fc_{t}","call_id":"c{t}","name":"shell","arguments":"{{}}"}}"#
        )
    };
    let result =
        |t: usize| format!(r#"{{"type":"function_call_output","call_id":"c{t}","output":"ok"}}"#);
    let turn = |t: usize, input: String, output: String| -> [Arc<str>; 3] {
        [
            format!("resp_{t}").into(),
            format!("[{input}]").into(),
            format!("[{output}]").into(),
        ]
    };
    // Two plain turns, then a tool loop from a user message.
    let turns = [
        turn(0, user(0), answer(0)),
        turn(1, user(1), format!("{},{}", think(1), answer(1))),
        turn(2, user(2), format!("{},{}", think(2), call(2))),
        turn(3, result(2), format!("{},{}", think(3), call(3))),
        turn(4, result(3), format!("{},{}", think(4), call(4))),
    ];
    let tools = r#""tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}]"#;
    let asking = format!(r#"{{"model":"m","previous_response_id":"prev","input":"next",{tools}}}"#);
    let answering = |t: usize| {
        format!(
            r#"{{"model":"m","previous_response_id":"prev","input":[{}],{tools}}}"#,
            result(t)
        )
    };
    let cache = HistoryCache::new(1 << 20);
    // The user's message is the request's own: every stored turn spliced.
    for (depth, body) in [
        (2, asking.clone()),
        (3, answering(2)),
        (4, answering(3)),
        (5, answering(4)),
    ] {
        let whole = translated(None, &turns[..depth], &body, &options);
        assert_eq!(
            translated(Some(&cache), &turns[..depth], &body, &options),
            whole,
            "depth {depth}"
        );
        let kept = cache.lock();
        let run = kept.runs.values().next().expect("a run kept");
        // Up to the turn before the current one, which starts with the
        // third turn's user message from depth 3 on.
        assert_eq!(run.len(), depth.min(2), "depth {depth}");
    }
    // The same conversation continued again without a user message: where
    // the turn starts is found in the run.
    let fresh = HistoryCache::new(1 << 20);
    let whole = translated(None, &turns[..3], &asking, &options);
    assert_eq!(
        translated(Some(&fresh), &turns[..3], &asking, &options),
        whole
    );
    assert_eq!(fresh.lock().runs.values().next().unwrap().len(), 3);
    let whole = translated(None, &turns[..3], &answering(2), &options);
    assert_eq!(
        translated(Some(&fresh), &turns[..3], &answering(2), &options),
        whole
    );
    assert_eq!(fresh.lock().runs.values().next().unwrap().len(), 2);
}
