//! Round trips through both request translators:
//!
//! - Chat → Responses (`chat_to_responses`) → Chat (`responses_to_chat` with
//!   the `openai` profile, which passes the most through);
//! - Responses → Chat (`responses_to_chat`, `openai` profile) → Responses
//!   (`chat_to_responses`).
//!
//! Each gives back the original except for the fields in the tables
//! [`chat::CHAT_LOSSY`] and [`responses::RESPONSES_LOSSY`]. Every row says
//! what differs and why, and rewrites the original (and, for generated
//! values, the round trip) the way the row says; after all rows the two must
//! be equal. The set of rows that change
//! something over the corpus must be the whole table: a row that never
//! applies documents a difference that does not exist. Every loss either
//! translator reports must be explained by a row that applied.
//!
//! `null` and an absent key are the same to both APIs and compare equal, and
//! numbers compare by value (`0` and `0.0`).

mod chat;
mod json;
mod responses;

use std::collections::BTreeSet;

use serde_json::Value;
use wirebridge_convert::{LossKind, LossReport};

use json::canonical;

/// One documented difference: the field, why, the loss kinds it explains,
/// and the rewrite of (original, round trip) it stands for.
struct Lossy {
    field: &'static str,
    why: &'static str,
    reported: &'static [LossKind],
    rewrite: fn(&mut Value, &mut Value),
}

/// Applies the table to one round trip, notes the rows that changed
/// something, and checks the rest is equal and every loss is explained.
fn check(
    name: &str,
    original: Value,
    round_trip: Value,
    table: &[Lossy],
    losses: &[LossReport],
    applied: &mut BTreeSet<&'static str>,
    reported_by_row: &mut BTreeSet<&'static str>,
) {
    let (mut expected, mut actual) = (original, round_trip);
    canonical(&mut expected);
    canonical(&mut actual);
    let kinds: BTreeSet<LossKind> = losses.iter().flatten().map(|l| l.kind).collect();
    let mut explained = BTreeSet::new();
    for row in table {
        let before = (expected.clone(), actual.clone());
        (row.rewrite)(&mut expected, &mut actual);
        if (expected.clone(), actual.clone()) != before {
            applied.insert(row.field);
            explained.extend(row.reported.iter().copied());
            if row.reported.iter().any(|k| kinds.contains(k)) {
                reported_by_row.insert(row.field);
            }
        }
    }
    if expected != actual {
        let mut differences = Vec::new();
        diff("", &expected, &actual, &mut differences);
        panic!(
            "{name}: the round trip differs beyond the documented losses:\n  {}",
            differences.join("\n  ")
        );
    }
    for loss in losses.iter().flatten() {
        assert!(
            explained.contains(&loss.kind),
            "{name}: reported loss not documented by a row that applied: {loss}"
        );
    }
}

/// Every row applies somewhere in the corpus, and a row that explains
/// reported losses comes with such a report at least once.
fn assert_table_used(
    table: &[Lossy],
    applied: &BTreeSet<&'static str>,
    reported: &BTreeSet<&'static str>,
) {
    let documented: BTreeSet<&str> = table.iter().map(|r| r.field).collect();
    assert_eq!(
        &documented, applied,
        "the fields that differ must be exactly the documented ones"
    );
    for row in table.iter().filter(|r| !r.reported.is_empty()) {
        assert!(
            reported.contains(row.field),
            "'{}' ({}) never came with a reported loss",
            row.field,
            row.why
        );
    }
}

/// The paths where two values differ.
fn diff(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let keys: BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for key in keys {
                let (ev, av) = (e.get(key), a.get(key));
                let sub = format!("{path}.{key}");
                match (ev, av) {
                    (Some(ev), Some(av)) => diff(&sub, ev, av, out),
                    _ => out.push(format!("{sub}: expected {ev:?}, got {av:?}")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff(&format!("{path}[{i}]"), ev, av, out);
            }
        }
        _ if expected != actual => out.push(format!("{path}: expected {expected}, got {actual}")),
        _ => {}
    }
}

fn input(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/inputs")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn tables_name_each_field_once() {
    for table in [chat::CHAT_LOSSY, responses::RESPONSES_LOSSY] {
        let mut seen = BTreeSet::new();
        for row in table {
            assert!(seen.insert(row.field), "'{}' twice", row.field);
            assert!(!row.why.is_empty());
        }
    }
}
