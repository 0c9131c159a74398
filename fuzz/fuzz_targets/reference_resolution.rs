//! Arbitrary bytes as a store's history and requests that refer to it:
//! `item_reference` items, `previous_response_id` and `conversation`,
//! resolved by a Responses client's layer over a Chat backend, with a
//! memory store the target watches (`wirebridge_fuzz::stateful`), two
//! tenants, and a bound on what one request may take in from the store.
//!
//! The input: two bytes of the bound (`u16`, big-endian, times 4, in
//! bytes), then operations, each a byte (its value modulo 3) and its own
//! bytes:
//!
//! ```text
//! 0 [flags] [previous] [n] [size]…   stores a turn of n messages
//! 1 [flags] [n] [size]…              creates a conversation of n messages
//! 2 [flags] [previous] [conversation] [n] entries…   a request to check
//! ```
//!
//! Flags bit 0 chooses the tenant, bit 1 a `previous_response_id` (the
//! `previous` byte indexes the responses stored so far, both tenants', or
//! names a made-up one past them), bit 2 a `conversation` (likewise), bit
//! 3 `store: true`. A message's size byte times 32 is its text's length.
//! An entry is a byte: modulo 4, 0 and 1 refer to a stored item (the next
//! byte indexes every item stored, both tenants'), 2 to a made-up id (a
//! length byte, then its bytes), 3 is a message (a size byte).
//!
//! Checked of every request, beyond not panicking: no 5xx, every error in
//! the OpenAI shape; a previous response or a conversation of the other
//! tenant is a 404 naming it; what the store adds (the continued turns,
//! then each reference's item each time named, as the store handed them
//! out) past the bound is a 400 `resolved_input_too_large` naming the
//! field that passed it, and within it never is; a reference to an item
//! the tenant did not store is refused naming `input`; a refused request
//! never reaches the backend; the store hands a tenant only its own turns,
//! in at most one `chain` and one `turns` read however many references;
//! and the same request resolved again gets the same answer and sends the
//! backend the same body.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use wirebridge_fuzz::stateful::{Answer, ByteReader, Harness};

/// Operations one input may run: enough for a history and a few requests.
const MAX_OPERATIONS: usize = 24;

/// What the target stored, by tenant.
#[derive(Default)]
struct Model {
    /// Responses: tenant, id.
    responses: Vec<(usize, String)>,
    /// Conversations: tenant, id.
    conversations: Vec<(usize, String)>,
    /// Every item id stored, with the tenants that stored it.
    items: Vec<String>,
    owners: HashMap<String, [bool; 2]>,
    /// The store's key of each tenant, once seen.
    tenant_keys: [Option<String>; 2],
}

fn message(size: u8) -> Value {
    json!({"role": "user", "content": "x".repeat(usize::from(size) * 32)})
}

fn messages(input: &mut ByteReader<'_>) -> Vec<Value> {
    let n = 1 + usize::from(input.byte() % 3);
    (0..n).map(|_| message(input.byte())).collect()
}

/// The id of the `index`th entry of `list`, or a made-up one past it.
fn pick(list: &[(usize, String)], index: u8, prefix: &str) -> String {
    match list.get(usize::from(index)) {
        Some((_, id)) => id.clone(),
        None => format!("{prefix}_{index:02x}"),
    }
}

/// The ids of the items of a JSON array of items.
fn item_ids(array: &str) -> Vec<(String, usize)> {
    let items: Vec<&RawValue> = serde_json::from_str(array).expect("the store keeps JSON arrays");
    items
        .into_iter()
        .filter_map(|raw| {
            let value: Value = serde_json::from_str(raw.get()).ok()?;
            Some((value["id"].as_str()?.to_owned(), raw.get().len()))
        })
        .collect()
}

impl Model {
    /// Takes in the saves the store logged since `seen`, made by `tenant`.
    fn saved(&mut self, harness: &Harness, seen: usize, tenant: usize) {
        let log = harness.log.lock().expect("never poisoned");
        for (key, turn) in &log.saves[seen..] {
            match &self.tenant_keys[tenant] {
                Some(known) => assert_eq!(known, key, "one credential, one tenant"),
                None => self.tenant_keys[tenant] = Some(key.clone()),
            }
            assert_ne!(
                self.tenant_keys[1 - tenant].as_deref(),
                Some(key.as_str()),
                "two credentials, two tenants"
            );
            if !self.responses.iter().any(|(_, id)| **id == *turn.id) {
                self.responses.push((tenant, turn.id.to_string()));
            }
            for array in [&turn.input, &turn.output] {
                for (id, _) in item_ids(array) {
                    let owners = self.owners.entry(id.clone()).or_insert_with(|| {
                        self.items.push(id.clone());
                        [false; 2]
                    });
                    owners[tenant] = true;
                }
            }
        }
    }

    fn owns_response(&self, tenant: usize, id: &str) -> bool {
        self.responses.iter().any(|(t, r)| *t == tenant && r == id)
    }
}

/// A request to check, and what it asks of the store.
struct Probe {
    tenant: usize,
    previous: Option<String>,
    conversation: Option<String>,
    references: Vec<String>,
    body: Vec<u8>,
}

fn probe(input: &mut ByteReader<'_>, model: &Model) -> Probe {
    let flags = input.byte();
    let tenant = usize::from(flags & 1);
    let previous = pick(&model.responses, input.byte(), "resp");
    let conversation = pick(&model.conversations, input.byte(), "conv");
    let previous = (flags & 2 != 0).then_some(previous);
    // A request continues a response or a conversation, not both.
    let conversation = (flags & 4 != 0 && previous.is_none()).then_some(conversation);
    let mut entries = Vec::new();
    let mut references = Vec::new();
    for _ in 0..input.byte() % 16 {
        let kind = input.byte();
        let entry = match kind % 4 {
            0 | 1 => {
                let index = usize::from(input.byte());
                let id = match model.items.len() {
                    0 => "msg_none".to_owned(),
                    n => model.items[index % n].clone(),
                };
                references.push(id.clone());
                json!({"type": "item_reference", "id": id})
            }
            2 => {
                let len = usize::from(input.byte() % 48);
                let id = input.text(len);
                references.push(id.clone());
                json!({"type": "item_reference", "id": id})
            }
            _ => message(input.byte()),
        };
        entries.push(entry);
    }
    let mut body = json!({"model": "m", "input": entries, "store": flags & 8 != 0});
    if let Some(id) = &previous {
        body["previous_response_id"] = json!(id);
    }
    if let Some(id) = &conversation {
        body["conversation"] = json!(id);
    }
    Probe {
        tenant,
        previous,
        conversation,
        references,
        body: serde_json::to_vec(&body).expect("JSON serializes"),
    }
}

/// What the store added to the request by the bridge's own account,
/// recomputed from the turns the store handed out: the continued turns'
/// bytes, then each found reference's item (the first with its id, in the
/// continued turns, then the others read), each time named. The first is
/// the continued turns' alone.
fn store_added(harness: &Harness, references: &[String]) -> (usize, usize) {
    let log = harness.log.lock().expect("never poisoned");
    let chain: usize = log
        .chain
        .iter()
        .map(|(_, t)| t.input.len() + t.output.len())
        .sum();
    let mut found: HashMap<String, usize> = HashMap::new();
    for (_, turn) in log.chain.iter().chain(&log.referable) {
        for array in [&turn.input, &turn.output] {
            for (id, len) in item_ids(array) {
                found.entry(id).or_insert(len);
            }
        }
    }
    let referred: usize = references.iter().filter_map(|r| found.get(r)).sum();
    (chain, chain + referred)
}

/// Sends the request once and checks the answer against the model.
fn check(harness: &Harness, model: &Model, probe: &Probe, bound: usize) -> (Answer, Vec<Vec<u8>>) {
    harness.clear();
    let answer = harness.call(
        "POST",
        "/v1/responses",
        probe.tenant,
        Some(probe.body.clone()),
    );
    let request = String::from_utf8_lossy(&probe.body);
    let what = format!(
        "{request}\n-> {} {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    answer.check_shape(&what);
    let (param, code) = answer.error();
    let sent: Vec<Vec<u8>> = harness
        .sent
        .lock()
        .expect("never poisoned")
        .iter()
        .map(|b| b.to_vec())
        .collect();
    let log = harness.log.lock().expect("never poisoned");

    // The store hands a tenant its own turns only, in one read of each kind.
    let own_key = model.tenant_keys[probe.tenant].as_deref();
    for (key, turn) in log.chain.iter().chain(&log.referable) {
        if let Some(own) = own_key {
            assert_eq!(key, own, "{what}: the store was asked as another tenant");
        }
        let saved_by = log
            .saves
            .iter()
            .find(|(_, t)| t.id == turn.id)
            .map(|(k, _)| k);
        assert_eq!(
            saved_by,
            Some(key),
            "{what}: {} read by another tenant",
            turn.id
        );
    }
    assert!(log.chains <= 1, "{what}: {} chain reads", log.chains);
    assert!(
        log.turn_reads <= 1,
        "{what}: {} turns reads",
        log.turn_reads
    );
    assert!(log.gets <= 1, "{what}: {} gets", log.gets);
    drop(log);

    if answer.status.is_client_error() {
        assert!(
            sent.is_empty(),
            "{what}: a refused request reached the backend"
        );
    }
    if let Some(previous) = &probe.previous {
        if !model.owns_response(probe.tenant, previous) {
            assert_eq!(answer.status, 404, "{what}");
            assert_eq!(param, Some("previous_response_id"), "{what}");
            return (answer, sent);
        }
    }
    let too_large = code == Some("resolved_input_too_large");
    if too_large {
        assert_eq!(answer.status, 400, "{what}");
    }
    let (chain, added) = store_added(harness, &probe.references);
    if chain > bound {
        assert!(too_large, "{what}: {chain} bytes continued past {bound}");
        assert_eq!(param, Some("previous_response_id"), "{what}");
        return (answer, sent);
    }
    if added > bound {
        assert!(too_large, "{what}: {added} bytes taken in past {bound}");
        assert_eq!(param, Some("input"), "{what}");
        return (answer, sent);
    }
    if let Some(conversation) = &probe.conversation {
        if !model
            .conversations
            .iter()
            .any(|(t, c)| *t == probe.tenant && c == conversation)
        {
            assert_eq!(answer.status, 404, "{what}");
            assert_eq!(param, Some("conversation"), "{what}");
            return (answer, sent);
        }
        // The conversation's items are counted too, after the rest.
        if too_large {
            assert_eq!(param, Some("conversation"), "{what}");
        }
        return (answer, sent);
    }
    assert!(!too_large, "{what}: {added} bytes taken in within {bound}");
    let foreign = probe
        .references
        .iter()
        .find(|r| !model.owners.get(*r).is_some_and(|o| o[probe.tenant]));
    if let Some(reference) = foreign {
        assert!(
            answer.status.is_client_error(),
            "{what}: {reference:?} is no item of this tenant's"
        );
        assert!(
            param.is_some_and(|p| p.starts_with("input")),
            "{what}: the refusal names no input item"
        );
    }
    (answer, sent)
}

fuzz_target!(|data: &[u8]| {
    let mut input = ByteReader(data);
    let bound = usize::from(u16::from_be_bytes([input.byte(), input.byte()])) * 4;
    let harness = Harness::new(bound);
    let mut model = Model::default();
    for _ in 0..MAX_OPERATIONS {
        let Some(operation) = input.take() else { break };
        let seen = harness.log.lock().expect("never poisoned").saves.len();
        match operation % 3 {
            0 => {
                let flags = input.byte();
                let tenant = usize::from(flags & 1);
                let previous = pick(&model.responses, input.byte(), "resp");
                let mut body = json!({"model": "m", "input": messages(&mut input)});
                if flags & 2 != 0 {
                    body["previous_response_id"] = json!(previous);
                }
                let answer = harness.call(
                    "POST",
                    "/v1/responses",
                    tenant,
                    Some(body.to_string().into_bytes()),
                );
                answer.check_shape("a stored turn");
                model.saved(&harness, seen, tenant);
            }
            1 => {
                let tenant = usize::from(input.byte() & 1);
                let body = json!({"items": messages(&mut input)});
                let answer = harness.call(
                    "POST",
                    "/v1/conversations",
                    tenant,
                    Some(body.to_string().into_bytes()),
                );
                answer.check_shape("a conversation created");
                if let Some(id) = answer.json.as_ref().and_then(|j| j["id"].as_str()) {
                    model.conversations.push((tenant, id.to_owned()));
                }
            }
            _ => {
                let probe = probe(&mut input, &model);
                let (first, first_sent) = check(&harness, &model, &probe, bound);
                // Resolved again against the same store: the same answer,
                // the same body sent on. A turn that joined a conversation
                // changed what the second would read.
                if probe.conversation.is_none() || first.status != 200 {
                    let (again, again_sent) = check(&harness, &model, &probe, bound);
                    assert_eq!(again_sent, first_sent, "the backend was sent another body");
                    assert_eq!(again.status, first.status);
                    if first.status != 200 {
                        assert_eq!(again.body, first.body);
                    }
                }
                model.saved(&harness, seen, probe.tenant);
            }
        }
    }
});
