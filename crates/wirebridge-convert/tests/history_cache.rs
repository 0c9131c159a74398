//! Stored turns spliced from a `HistoryCache` translate exactly as the
//! whole conversation does: the same Chat request, byte for byte, the same
//! losses, the same withheld reasoning and the same errors, cold and warm,
//! over seeded random conversations of every item kind the translator
//! carries state across (calls joining messages, reasoning waiting for its
//! message, images of tool results held back, the current turn's start).

use serde_json::{json, Value};
use std::sync::Arc;
use wirebridge_convert::loss::LossPolicy;

use wirebridge_convert::responses_to_chat::{
    History, HistoryCache, Options, ParsedRequest, SharedTurn,
};

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Turn {
    id: String,
    input: String,
    output: String,
}

/// A conversation of `depth` stored turns, and the calls its last turn left
/// unanswered.
fn conversation(rng: &mut Rng, depth: usize) -> (Vec<Turn>, Vec<String>) {
    let mut turns = Vec::new();
    let mut open_calls: Vec<String> = Vec::new();
    for t in 0..depth {
        let input = input_items(rng, t, &mut open_calls);
        let output = output_items(rng, t, &mut open_calls);
        turns.push(Turn {
            id: format!("resp_{t}"),
            input: Value::Array(input).to_string(),
            output: Value::Array(output).to_string(),
        });
    }
    (turns, open_calls)
}

fn user(text: &str, id: String) -> Value {
    json!({"type": "message", "id": id, "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn input_items(rng: &mut Rng, t: usize, open_calls: &mut Vec<String>) -> Vec<Value> {
    let id = |n: usize| format!("in_{t}_{n}");
    let mut items = Vec::new();
    if !open_calls.is_empty() && rng.below(3) > 0 {
        for (n, call) in std::mem::take(open_calls).into_iter().enumerate() {
            items.push(match rng.below(4) {
                // A result with an image: its user message waits for the
                // end of the run of tool messages.
                0 => json!({"type": "function_call_output", "id": id(n), "call_id": call, "output": [
                    {"type": "input_text", "text": "see"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}),
                _ => json!({"type": "function_call_output", "id": id(n), "call_id": call, "output": format!("ok {t}")}),
            });
        }
        if rng.below(4) == 0 {
            items.push(user("and then?", id(9)));
        }
        return items;
    }
    open_calls.clear();
    match rng.below(12) {
        0 => items.push(json!({"type": "message", "id": id(0), "role": "developer", "content": "be brief"})),
        1 => items.push(json!({"type": "mystery", "id": id(0)})),
        2 => items.push(json!({"type": "function_call", "id": id(0), "call_id": format!("early_{t}"), "name": "shell", "arguments": "{}"})),
        3 => items.push(json!({"type": "reasoning", "id": id(0), "summary": [{"type": "summary_text", "text": "hm"}]})),
        _ => {}
    }
    items.push(user(&format!("question {t}"), id(1)));
    items
}

fn output_items(rng: &mut Rng, t: usize, open_calls: &mut Vec<String>) -> Vec<Value> {
    let id = |n: usize| format!("out_{t}_{n}");
    let mut items = Vec::new();
    if rng.below(2) == 0 {
        items.push(json!({"type": "reasoning", "id": id(0), "summary": [{"type": "summary_text", "text": format!("thinking {t}")}]}));
    }
    let answer = json!({"type": "message", "id": id(1), "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": format!("answer {t}"), "annotations": []}]});
    match rng.below(6) {
        0 | 1 => items.push(answer),
        2 => {
            items.push(answer);
            let call = format!("call_{t}_a");
            items.push(json!({"type": "function_call", "id": id(2), "call_id": call, "name": "shell", "arguments": "{\"cmd\":\"ls\"}"}));
            open_calls.push(call);
        }
        3 => {
            for n in 0..1 + rng.below(3) as usize {
                let call = format!("call_{t}_{n}");
                items.push(json!({"type": "function_call", "id": id(3 + n), "call_id": call, "name": "shell", "arguments": "{}"}));
                open_calls.push(call);
            }
        }
        4 => {
            let call = format!("call_{t}_p");
            items.push(json!({"type": "custom_tool_call", "id": id(2), "call_id": call, "name": "apply_patch", "input": "*** Begin Patch"}));
            open_calls.push(call);
        }
        _ => {}
    }
    items
}

/// The request continuing the conversation, and its own input.
fn request(rng: &mut Rng, open_calls: &[String], previous: &str) -> Vec<u8> {
    let input = match rng.below(6) {
        0 => json!("and now?"),
        1 => json!([{"type": "function_call", "call_id": "fresh", "name": "shell", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "fresh", "output": "done"}]),
        2 | 3 if !open_calls.is_empty() => Value::Array(
            open_calls
                .iter()
                .map(|call| json!({"type": "function_call_output", "call_id": call, "output": "fine"}))
                .collect(),
        ),
        4 => json!([{"type": "function_call_output", "call_id": "nobody", "output": "?"}]),
        _ => json!([{"role": "user", "content": "go on"}]),
    };
    let mut body = json!({
        "model": "m",
        "previous_response_id": previous,
        "input": input,
        "tools": [
            {"type": "function", "name": "shell", "parameters": {"type": "object"}},
            {"type": "custom", "name": "apply_patch"}
        ],
    });
    if rng.below(3) == 0 {
        body["instructions"] = json!("You are terse.");
    }
    if rng.below(3) == 0 {
        body["reasoning"] = json!({"context": "all_turns"});
    }
    serde_json::to_vec(&body).unwrap()
}

fn options(variant: u64) -> Options {
    let mut options = Options::default();
    options.profile.replay_reasoning = variant & 1 == 1;
    if variant & 2 == 2 {
        options.policy = LossPolicy::strict();
    }
    options
}

/// Everything a translation gives that splicing could change.
fn outcome(body: &[u8], history: &History<'_>, options: &Options) -> String {
    match ParsedRequest::parse(body)
        .unwrap()
        .translate(history, options)
    {
        Ok(t) => format!(
            "{}\nlosses: {:?}\nwithheld: {:?}",
            String::from_utf8(t.body).unwrap(),
            t.losses.iter().collect::<Vec<_>>(),
            t.context.echo.input_transformations
        ),
        Err(e) => format!("error: {e} {:?}", e.param()),
    }
}

const SEEDS: u64 = 400;

/// One cache serves every conversation of a variant, and their turns have
/// the same response ids (`resp_0`, `resp_1`, …): a turn kept for one
/// conversation must not be taken for another's, even where only the middle
/// of its stored text differs.
#[test]
fn spliced_turns_translate_as_the_whole_conversation_does() {
    let mut spliced_requests = 0;
    let mut requests = 0;
    for variant in 0..4 {
        let options = options(variant);
        let cache = HistoryCache::default();
        for seed in 1..=SEEDS {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) + variant);
            let depth = 1 + rng.below(12) as usize;
            let (turns, open_calls) = conversation(&mut rng, depth);
            let body = request(&mut rng, &open_calls, &turns[depth - 1].id);
            let arrays = || {
                turns
                    .iter()
                    .flat_map(|t| [t.input.as_str(), t.output.as_str()])
            };
            let whole = outcome(&body, &History::new("prev", arrays()), &options);
            // Cold, then warm: the second copies what the first kept.
            for pass in ["cold", "warm"] {
                let before = cache.spliced_requests();
                let history = History::new("prev", arrays()).with_cache(
                    &cache,
                    "tenant",
                    turns.iter().map(|t| t.id.as_str()),
                );
                let got = outcome(&body, &history, &options);
                assert_eq!(
                    got, whole,
                    "variant {variant}, seed {seed}, {pass}: spliced differs from whole"
                );
                requests += 1;
                spliced_requests += cache.spliced_requests() - before;
            }
        }
        // The same over a store that shares its text: the turns a request
        // spliced are kept together and known again by address. A request
        // continuing the turn before the last keeps them; the next, one
        // turn deeper, takes them and makes them longer; the last takes
        // them whole.
        let shared_cache = HistoryCache::default();
        for seed in 1..=SEEDS / 4 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) + variant);
            let depth = 2 + rng.below(11) as usize;
            let (turns, open_calls) = conversation(&mut rng, depth);
            let body = request(&mut rng, &open_calls, &turns[depth - 1].id);
            let shared: Vec<[Arc<str>; 3]> = turns
                .iter()
                .map(|t| [&t.id, &t.input, &t.output].map(|text| Arc::from(text.as_str())))
                .collect();
            let earlier = br#"{"model":"m","previous_response_id":"prev","input":"next"}"#;
            for (pass, depth, body) in [
                ("shorter", depth - 1, &earlier[..]),
                ("deeper", depth, &body[..]),
                ("again", depth, &body[..]),
            ] {
                let turns = &shared[..depth];
                let arrays = || turns.iter().flat_map(|[_, i, o]| [&**i, &**o]);
                let whole = outcome(body, &History::new("prev", arrays()), &options);
                let given =
                    turns
                        .iter()
                        .map(|[id, input, output]| SharedTurn { id, input, output });
                let history = History::new("prev", arrays()).with_shared_cache(
                    &shared_cache,
                    "tenant",
                    given,
                );
                assert_eq!(
                    outcome(body, &history, &options),
                    whole,
                    "variant {variant}, seed {seed}, {pass}: spliced from shared text differs from whole"
                );
            }
        }
        if variant < 2 {
            assert!(
                shared_cache.spliced_requests() > SEEDS / 4,
                "variant {variant}"
            );
        }
        // The comparison is not vacuous: under the lenient policy, where
        // most requests translate, a third at least were spliced (the
        // others hold what the generator puts in to be declined: a call
        // first in a turn, a result answering nothing).
        if variant < 2 {
            assert!(
                cache.spliced_requests() * 3 > 2 * SEEDS,
                "variant {variant}: {} of {} spliced",
                cache.spliced_requests(),
                2 * SEEDS
            );
        }
    }
    assert_eq!(requests, 8 * SEEDS);
    assert!(spliced_requests > 0);
}

#[test]
fn a_warm_turn_copies_every_stored_turn_and_translates_only_its_own() {
    let cache = HistoryCache::default();
    let options = Options::default();
    let mut turns = Vec::new();
    for t in 0..50 {
        turns.push(Turn {
            id: format!("resp_{t}"),
            input: json!([user(&format!("q{t}"), format!("in_{t}"))]).to_string(),
            output: json!([{"type": "message", "id": format!("out_{t}"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": format!("a{t}"), "annotations": []}]}])
            .to_string(),
        });
    }
    let body = br#"{"model":"m","previous_response_id":"resp_49","input":"next"}"#;
    let translate = |turns: &[Turn]| {
        let history = History::new(
            "resp_49",
            turns
                .iter()
                .flat_map(|t| [t.input.as_str(), t.output.as_str()]),
        )
        .with_cache(&cache, "tenant", turns.iter().map(|t| t.id.as_str()));
        let translated = ParsedRequest::parse(body)
            .unwrap()
            .translate(&history, &options)
            .unwrap();
        serde_json::from_slice::<Value>(&translated.body).unwrap()
    };
    let cold = translate(&turns);
    assert_eq!((cache.hits(), cache.misses()), (0, 50));
    let warm = translate(&turns);
    assert_eq!((cache.hits(), cache.misses()), (50, 50));
    assert_eq!(cold, warm);
    assert_eq!(warm["messages"].as_array().unwrap().len(), 101);
    assert_eq!(warm["messages"][100]["content"], "next");
    // Another tenant shares nothing.
    let history = History::new(
        "resp_49",
        turns
            .iter()
            .flat_map(|t| [t.input.as_str(), t.output.as_str()]),
    )
    .with_cache(&cache, "other", turns.iter().map(|t| t.id.as_str()));
    ParsedRequest::parse(body)
        .unwrap()
        .translate(&history, &options)
        .unwrap();
    assert_eq!((cache.hits(), cache.misses()), (50, 100));
    // A turn saved again (a background run finishing) is not mistaken for
    // its earlier save.
    turns[49].output = "[]".into();
    translate(&turns);
    assert_eq!((cache.hits(), cache.misses()), (99, 101));
}

#[test]
fn a_turn_that_cannot_be_spliced_is_remembered_as_such() {
    let cache = HistoryCache::default();
    let options = Options::default();
    let message = |role: &str, text: &str, id: &str| {
        json!({"type": "message", "id": id, "role": role, "status": "completed",
               "content": [{"type": if role == "user" { "input_text" } else { "output_text" }, "text": text}]})
    };
    // The second turn's input starts with a call, which joins the first
    // turn's last assistant message: it cannot be translated on its own.
    let turns = [
        (
            "resp_0",
            json!([message("user", "hi", "in_0")]),
            json!([message("assistant", "hello", "out_0")]),
        ),
        (
            "resp_1",
            json!([{"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "shell", "arguments": "{}"},
                   {"type": "function_call_output", "id": "fo_1", "call_id": "c1", "output": "ok"}]),
            json!([message("assistant", "done", "out_1")]),
        ),
        (
            "resp_2",
            json!([message("user", "and?", "in_2")]),
            json!([message("assistant", "nothing", "out_2")]),
        ),
    ]
    .map(|(id, input, output)| Turn {
        id: id.into(),
        input: input.to_string(),
        output: output.to_string(),
    });
    let body = br#"{"model":"m","previous_response_id":"resp_2","input":"next","tools":[{"type":"function","name":"shell"}]}"#;
    let arrays = || {
        turns
            .iter()
            .flat_map(|t| [t.input.as_str(), t.output.as_str()])
    };
    let whole = outcome(body, &History::new("resp_2", arrays()), &options);
    for (pass, misses, hits) in [("cold", 2, 0), ("warm", 2, 2)] {
        let history = History::new("resp_2", arrays()).with_cache(
            &cache,
            "tenant",
            turns.iter().map(|t| t.id.as_str()),
        );
        assert_eq!(outcome(body, &history, &options), whole, "{pass}");
        // The first turn is kept, the second kept as one that cannot be
        // spliced; the warm request stops there, reading nothing again.
        assert_eq!((cache.misses(), cache.hits()), (misses, hits), "{pass}");
    }
    assert_eq!(cache.spliced_requests(), 0);
}

#[test]
fn a_turn_its_store_shares_is_kept_without_a_copy_and_known_by_its_address() {
    let cache = HistoryCache::default();
    let options = Options::default();
    let shared = |t: usize, answer: &str| -> [Arc<str>; 3] {
        [
            format!("resp_{t}").into(),
            json!([user(&format!("q{t}"), format!("in_{t}"))])
                .to_string()
                .into(),
            json!([{"type": "message", "id": format!("out_{t}"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer, "annotations": []}]}])
            .to_string()
            .into(),
        ]
    };
    let mut turns: Vec<[Arc<str>; 3]> = (0..3).map(|t| shared(t, &format!("a{t}"))).collect();
    let body = br#"{"model":"m","previous_response_id":"resp_2","input":"next"}"#;
    let translate = |turns: &[[Arc<str>; 3]], arrays: &[&str]| {
        let given = turns
            .iter()
            .map(|[id, input, output]| SharedTurn { id, input, output });
        let history = History::new("resp_2", arrays.iter().copied())
            .with_shared_cache(&cache, "tenant", given);
        let translated = ParsedRequest::parse(body)
            .unwrap()
            .translate(&history, &options)
            .unwrap();
        serde_json::from_slice::<Value>(&translated.body).unwrap()
    };
    let arrays_of = |turns: &[[Arc<str>; 3]]| -> Vec<String> {
        turns
            .iter()
            .flat_map(|[_, input, output]| [input.to_string(), output.to_string()])
            .collect()
    };
    let copies = arrays_of(&turns);
    let history = History::new("resp_2", copies.iter().map(String::as_str));
    let translated = ParsedRequest::parse(body)
        .unwrap()
        .translate(&history, &options)
        .unwrap();
    let whole: Value = serde_json::from_slice(&translated.body).unwrap();

    // Cold: each turn is kept as the store's own text, not a copy (held
    // by its entry and by the run of turns the request spliced).
    let arrays: Vec<&str> = turns.iter().flat_map(|[_, i, o]| [&**i, &**o]).collect();
    assert_eq!(translate(&turns, &arrays), whole);
    assert_eq!((cache.misses(), cache.hits()), (3, 0));
    for [id, input, output] in &turns {
        assert_eq!(
            [
                Arc::strong_count(id),
                Arc::strong_count(input),
                Arc::strong_count(output)
            ],
            [3, 3, 3]
        );
    }
    // Warm: found again.
    assert_eq!(translate(&turns, &arrays), whole);
    assert_eq!((cache.misses(), cache.hits()), (3, 3));
    // The same text read again into new allocations (another store's read)
    // is still the same turn, compared byte for byte.
    let reread: Vec<[Arc<str>; 3]> = turns
        .iter()
        .map(|turn| turn.each_ref().map(|text| Arc::<str>::from(&**text)))
        .collect();
    let arrays: Vec<&str> = reread.iter().flat_map(|[_, i, o]| [&**i, &**o]).collect();
    assert_eq!(translate(&reread, &arrays), whole);
    assert_eq!((cache.misses(), cache.hits()), (3, 6));
    // A turn saved again, under its id, is not taken for its earlier save.
    turns[2] = shared(2, "another answer");
    let arrays: Vec<&str> = turns.iter().flat_map(|[_, i, o]| [&**i, &**o]).collect();
    let again = translate(&turns, &arrays);
    assert_eq!(again["messages"][5]["content"], "another answer");
    assert_eq!((cache.misses(), cache.hits()), (4, 8));
    // Arrays that are not the shared turns' own text are translated from
    // the arrays, and the cache keeps copies of them, not the shared text.
    let fresh = HistoryCache::default();
    let others: Vec<[Arc<str>; 3]> = (0..3).map(|t| shared(t, "never sent")).collect();
    let copies = arrays_of(&turns);
    let given = others
        .iter()
        .map(|[id, input, output]| SharedTurn { id, input, output });
    let history = History::new("resp_2", copies.iter().map(String::as_str))
        .with_shared_cache(&fresh, "tenant", given);
    let translated = ParsedRequest::parse(body)
        .unwrap()
        .translate(&history, &options)
        .unwrap();
    let chat: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(chat, again);
    assert_eq!(fresh.misses(), 3);
    for [_, input, output] in &others {
        assert_eq!(
            [Arc::strong_count(input), Arc::strong_count(output)],
            [1, 1]
        );
    }
}

/// One cache serving layers of other options: a turn translated under one
/// set is never spliced under another (the options are in its key).
#[test]
fn a_turn_kept_under_some_options_is_not_spliced_under_others() {
    let cache = HistoryCache::default();
    let mut other_profile = Options::default();
    other_profile.profile.developer_role = !other_profile.profile.developer_role;
    other_profile.profile.text_parts_as_string = !other_profile.profile.text_parts_as_string;
    let all = [
        options(0),
        options(1),
        options(2),
        options(3),
        other_profile,
    ];
    let mut compared = 0;
    for seed in 1..=SEEDS / 4 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let depth = 1 + rng.below(8) as usize;
        let (turns, open_calls) = conversation(&mut rng, depth);
        let body = request(&mut rng, &open_calls, &turns[depth - 1].id);
        let arrays = || {
            turns
                .iter()
                .flat_map(|t| [t.input.as_str(), t.output.as_str()])
        };
        for (n, options) in all.iter().enumerate() {
            let whole = outcome(&body, &History::new("prev", arrays()), options);
            let history = History::new("prev", arrays()).with_cache(
                &cache,
                "tenant",
                turns.iter().map(|t| t.id.as_str()),
            );
            assert_eq!(
                outcome(&body, &history, options),
                whole,
                "seed {seed}, options {n}"
            );
            compared += 1;
        }
    }
    assert!(cache.spliced_requests() > compared / 3, "{cache:?}");
}
