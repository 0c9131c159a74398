//! A stored conversation translated a turn at a time, its earlier turns
//! copied from the [`HistoryCache`](super::HistoryCache) in their Chat form.
//!
//! Translating the whole conversation walks its items with one
//! [`Builder`], which carries state from item to item: a call joins the
//! assistant message before it, reasoning waits for the next assistant
//! message, images of tool results wait for the end of the run of tool
//! messages, and which reasoning is replayed depends on where the current
//! turn starts. A stored turn translated on its own, with a builder of its
//! own, gives the same messages as inside the whole only when nothing
//! crosses its edges, so a turn is kept, and spliced, only when:
//!
//! - it starts fresh: its first item is a message, a tool result or
//!   reasoning, never a call that would join the message before it;
//! - it ends clean: no reasoning or image left waiting;
//! - its reasoning is handled as the whole would handle it: every turn
//!   before the one holding the last user message (when the backend takes
//!   reasoning back and only the current turn's is replayed), any turn
//!   otherwise;
//! - it holds no item whose meaning reaches beyond it (compactions, tools
//!   offered in the conversation).
//!
//! What follows the spliced turns (the turn under way and the request's
//! own items) is translated with one builder, as the whole would be. Where
//! any of this does not hold, or anything fails, the caller translates the
//! whole conversation instead, so errors are always the whole's.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use wirebridge_wire::chat::strict::{ChatMessage, ChatRequest, MessageContent, Role};
use wirebridge_wire::raw::JsonStr;
use wirebridge_wire::responses::lenient::{Input, InputItem, ItemKind};
use wirebridge_wire::responses::strict::InputTransformation;

use super::builder::{Builder, Replay};
use super::compaction_items::Cut;
use super::history::{read_items, History};
use super::history_cache::{CachedTurn, HistoryCache, Run, StoredPair, TurnKey};
use super::Options;
use crate::recorder::LossRecorder;
use crate::tool_names::ToolNameMap;

/// The conversation as Chat messages: `head`, the stored turns' kept
/// messages (those of the run the last request kept, then the others),
/// then `live`.
pub(super) struct Spliced<'a> {
    head: Vec<ChatMessage<'a>>,
    run: Option<Run>,
    /// The stored turns after the run, each with the text it came from.
    turns: Vec<(StoredPair<'a>, Arc<CachedTurn>)>,
    live: Vec<ChatMessage<'a>>,
    /// The reasoning items withheld from the backend, in input order.
    pub(super) withheld: Vec<InputTransformation>,
    /// Where the run goes back, with the turns after it, once the body is
    /// written: the cache, the tenant and the options' fingerprint.
    keep: Option<(&'a HistoryCache, &'a str, u64)>,
}

impl Drop for Spliced<'_> {
    /// Keeps the stored turns spliced as a run for the next request.
    fn drop(&mut self) {
        let Some((cache, scope, fingerprint)) = self.keep else {
            return;
        };
        // A store that does not share its text keeps no runs.
        if self.run.is_none()
            && self
                .turns
                .first()
                .is_none_or(|(pair, _)| pair.shared.is_none())
        {
            return;
        }
        let mut run = self
            .run
            .take()
            .unwrap_or_else(|| Run::new(scope, fingerprint));
        for (pair, turn) in &self.turns {
            if !run.push(pair, turn) {
                return;
            }
        }
        cache.keep_run(run);
    }
}

/// A stored turn, kept or read.
enum Unit<'a> {
    Kept(Arc<CachedTurn>),
    Read(Vec<InputItem<'a>>),
}

impl Unit<'_> {
    fn item_count(&self) -> usize {
        match self {
            Unit::Kept(turn) => turn.item_count,
            Unit::Read(items) => items.len(),
        }
    }

    fn last_user(&self) -> Option<usize> {
        match self {
            Unit::Kept(turn) => turn.last_user,
            Unit::Read(items) => items.iter().rposition(is_user_message),
        }
    }
}

/// Translates `instructions`, the stored history and the request's `own`
/// items (the client's input, its text made a user message), the stored
/// turns from the history's cache where it holds them, and keeps those it
/// translates; `None` where this would not give exactly what translating
/// the whole does.
pub(super) fn translate_input<'a>(
    instructions: Option<JsonStr<'a>>,
    history: &History<'a>,
    own: Vec<InputItem<'a>>,
    names: &ToolNameMap,
    options: &Options,
    replay: Replay,
    losses: &mut LossRecorder<'_>,
) -> Option<Spliced<'a>> {
    let (cache, scope, pairs) = history.cached_turns()?;
    if own.iter().any(reaches_beyond) {
        return None;
    }
    let fingerprint = fingerprint(options, names, replay);
    let key = |start, pair: &StoredPair<'a>| TurnKey {
        scope,
        fingerprint,
        start,
        id: pair.id,
        input: pair.input,
        output: pair.output,
        shared: pair.shared,
    };
    let mut lookups = cache.lookups();
    // The turns the last request spliced, known again by address.
    let mut run = lookups.take_run(scope, fingerprint, &pairs);
    let ran = run.as_ref().map_or(0, Run::len);
    let run_items = run.as_ref().map_or(0, Run::item_count);
    let mut units = Vec::with_capacity(pairs.len() - ran);
    let mut start = run_items;
    for pair in &pairs[ran..] {
        let unit = match lookups.get(&key(start, pair)) {
            Some(turn) if !turn.spliceable => return None,
            Some(turn) => Unit::Kept(turn),
            None => {
                lookups.release();
                let mut items = Vec::new();
                read_items(pair.input, &mut items).ok()?;
                read_items(pair.output, &mut items).ok()?;
                if items.iter().any(reaches_beyond) {
                    let turn = CachedTurn::unspliceable(items.len());
                    cache.insert(&key(start, pair), Arc::new(turn));
                    return None;
                }
                Unit::Read(items)
            }
        };
        start += unit.item_count();
        units.push(unit);
    }
    drop(lookups);
    let own_start = start;
    if own_start == 0 || !results_answer_calls(run.as_ref(), &units, &own) {
        return None;
    }

    // Where the current turn starts, as the whole would find it.
    let turn_start = match own.iter().rposition(is_user_message) {
        Some(i) => own_start + i,
        None => {
            let mut end = own_start;
            let mut found = None;
            for unit in units.iter().rev() {
                end -= unit.item_count();
                if let Some(i) = unit.last_user() {
                    found = Some(end + i);
                    break;
                }
            }
            found.or_else(|| run.as_ref()?.last_user()).unwrap_or(0)
        }
    };
    let boundary_matters = options.profile.replay_reasoning && !replay.all_turns;

    // Turns past the current turn's start are read with it, not spliced:
    // the run's among them too.
    let mut live_items = Vec::new();
    if let Some(run) = run.as_mut().filter(|_| boundary_matters) {
        let spliceable = run.turns_ending_by(turn_start);
        for pair in &pairs[spliceable..ran] {
            read_items(pair.input, &mut live_items).ok()?;
            read_items(pair.output, &mut live_items).ok()?;
        }
        run.truncate(spliceable);
    }

    let mut spliced = Spliced {
        head: Vec::new(),
        run: None,
        turns: Vec::with_capacity(units.len()),
        live: Vec::new(),
        withheld: Vec::new(),
        keep: None,
    };
    if let Some(instructions) = instructions {
        spliced.head.push(ChatMessage::new(
            Role::System,
            MessageContent::Text(instructions.into()),
        ));
    }
    for turn in run.iter().flat_map(Run::turns) {
        for loss in &turn.losses {
            losses
                .record(loss.kind, loss.path.clone(), loss.reason.clone())
                .ok()?;
        }
        spliced.withheld.extend(turn.withheld.iter().cloned());
    }
    spliced.run = run;

    let mut start = run_items;
    for (unit, pair) in units.into_iter().zip(&pairs[ran..]) {
        let unit_start = start;
        start += unit.item_count();
        let is_live = boundary_matters && start > turn_start;
        if is_live || !live_items.is_empty() {
            match unit {
                Unit::Kept(_) => {
                    read_items(pair.input, &mut live_items).ok()?;
                    read_items(pair.output, &mut live_items).ok()?;
                }
                Unit::Read(items) => live_items.extend(items),
            }
            continue;
        }
        let turn = match unit {
            Unit::Kept(turn) => turn,
            Unit::Read(items) => {
                let stored_len = pair.input.len() + pair.output.len();
                let turn = translate_turn(&items, unit_start, stored_len, names, options, replay);
                let spliceable = turn.is_some();
                let turn = turn.unwrap_or_else(|| CachedTurn::unspliceable(items.len()));
                let turn = Arc::new(turn);
                cache.insert(&key(unit_start, pair), Arc::clone(&turn));
                if !spliceable {
                    return None;
                }
                turn
            }
        };
        for loss in &turn.losses {
            losses
                .record(loss.kind, loss.path.clone(), loss.reason.clone())
                .ok()?;
        }
        spliced.withheld.extend(turn.withheld.iter().cloned());
        spliced.turns.push((*pair, turn));
    }
    let live_start = own_start - live_items.len();
    live_items.extend(own);
    let any_spliced =
        spliced.run.as_ref().is_some_and(|run| run.len() > 0) || !spliced.turns.is_empty();
    if any_spliced && !starts_fresh(&live_items) {
        return None;
    }

    let mut builder = Builder {
        messages: Vec::new(),
        deferred: Vec::new(),
        pending_reasoning: Vec::new(),
        withheld: Vec::new(),
        options,
        names,
        replay,
        turn_start,
        cut: Cut::new(&[], options.seal.as_ref(), None).ok()?,
    };
    for (i, item) in live_items.iter().enumerate() {
        builder.item(item, live_start + i, losses).ok()?;
    }
    builder.trailing_summary();
    builder.flush_deferred();
    spliced.live = builder.messages;
    spliced.withheld.extend(builder.withheld);
    let any_message = !spliced.head.is_empty()
        || !spliced.live.is_empty()
        || spliced
            .run
            .as_ref()
            .is_some_and(|run| !run.messages().is_empty())
        || spliced.turns.iter().any(|(_, t)| t.message_count > 0);
    if !any_message {
        return None;
    }
    spliced.keep = Some((cache, scope, fingerprint));
    Some(spliced)
}

/// The request's own items: its `input`, a text made a user message (as
/// the whole's translation makes it after stored turns); `None` for an
/// empty text, which the whole's translation refuses.
pub(super) fn own_items(input: Option<Input<'_>>) -> Option<Vec<InputItem<'_>>> {
    match input {
        None => Some(Vec::new()),
        Some(Input::Items(items)) => Some(items.into_vec()),
        Some(Input::Text(text)) if text.is_empty() => None,
        Some(Input::Text(text)) => Some(vec![InputItem {
            role: Some("user".into()),
            content: Some(text.raw()),
            ..InputItem::default()
        }]),
    }
}

impl Spliced<'_> {
    /// Writes `chat`, which has no messages, with these messages into
    /// `body`; false if its JSON does not start as a Chat request's does.
    pub(super) fn write_body(&self, chat: &ChatRequest<'_>, body: &mut Vec<u8>) -> bool {
        chat.write_json(body);
        // `{"model":…,"messages":[]…`: the model and the messages are the
        // first two fields, and the messages go between the brackets.
        let mut prefix = br#"{"model":"#.to_vec();
        serde_json::to_writer(&mut prefix, &chat.model).expect("strings serialize");
        prefix.extend_from_slice(br#","messages":["#);
        if !body.starts_with(&prefix) || body.get(prefix.len()) != Some(&b']') {
            return false;
        }
        let rest = body.split_off(prefix.len());
        self.write_messages(body);
        body.extend_from_slice(&rest);
        true
    }

    /// Writes the messages, comma-separated, into `out`.
    fn write_messages(&self, out: &mut Vec<u8>) {
        let mut first = true;
        let mut comma = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        for message in &self.head {
            comma(out);
            message.write_json(out);
        }
        if let Some(run) = self.run.as_ref().filter(|run| !run.messages().is_empty()) {
            comma(out);
            out.extend_from_slice(run.messages().as_bytes());
        }
        for (_, turn) in self.turns.iter().filter(|(_, t)| t.message_count > 0) {
            comma(out);
            out.extend_from_slice(turn.messages.as_bytes());
        }
        for message in &self.live {
            comma(out);
            message.write_json(out);
        }
    }
}

/// One stored turn translated on its own, from index `start` of the
/// conversation (`stored_len`: the bytes of its stored items); `None` when
/// it cannot be spliced (see the module).
fn translate_turn(
    items: &[InputItem<'_>],
    start: usize,
    stored_len: usize,
    names: &ToolNameMap,
    options: &Options,
    replay: Replay,
) -> Option<CachedTurn> {
    if !starts_fresh(items) {
        return None;
    }
    let mut losses = LossRecorder::new(&options.policy);
    let mut builder = Builder {
        messages: Vec::new(),
        deferred: Vec::new(),
        pending_reasoning: Vec::new(),
        withheld: Vec::new(),
        options,
        names,
        replay,
        // An earlier turn's: its reasoning is not the current turn's.
        turn_start: usize::MAX,
        cut: Cut::new(&[], options.seal.as_ref(), None).ok()?,
    };
    for (i, item) in items.iter().enumerate() {
        builder.item(item, start + i, &mut losses).ok()?;
    }
    if !builder.deferred.is_empty() || !builder.pending_reasoning.is_empty() {
        return None;
    }
    // About as long as the stored items: written with no regrowth, so
    // what a turn costs in allocations does not depend on its length.
    let mut messages = Vec::with_capacity(stored_len + stored_len / 4);
    for message in &builder.messages {
        if !messages.is_empty() {
            messages.push(b',');
        }
        message.write_json(&mut messages);
    }
    let call_ids = items
        .iter()
        .filter(|item| is_call(item))
        .filter_map(|item| item.call_id.as_deref().map(str::to_owned))
        .collect();
    // Kept as long as it is: the cache counts its length.
    messages.shrink_to_fit();
    Some(CachedTurn {
        messages: String::from_utf8(messages).ok()?,
        message_count: builder.messages.len(),
        item_count: items.len(),
        withheld: builder.withheld,
        losses: losses.finish().iter().cloned().collect(),
        call_ids,
        last_user: items.iter().rposition(is_user_message),
        spliceable: true,
    })
}

/// The options and tool names a turn is translated with, as one number.
fn fingerprint(options: &Options, names: &ToolNameMap, replay: Replay) -> u64 {
    let mut hasher = DefaultHasher::new();
    // Hashes derived for every field of each, so a new setting is included
    // too. (They were written with `Debug` into a string and that hashed:
    // about 8 K instructions a request continuing a stored conversation.)
    (
        &options.profile,
        &options.policy,
        options.reasoning_output,
        names,
        replay.all_turns,
    )
        .hash(&mut hasher);
    if let Some(seal) = &options.seal {
        (Arc::as_ptr(&seal.sealer) as usize).hash(&mut hasher);
        seal.scope.hash(&mut hasher);
    }
    hasher.finish()
}

/// Whether every tool result among `own` answers a call of the
/// conversation (else the whole's translation says which does not).
fn results_answer_calls(run: Option<&Run>, units: &[Unit<'_>], own: &[InputItem<'_>]) -> bool {
    let mut results = own.iter().filter(|item| {
        matches!(
            item.classify(),
            ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput
        )
    });
    results.all(|result| {
        let Some(id) = result.call_id.as_deref() else {
            return false;
        };
        let answers = |item: &InputItem<'_>| is_call(item) && item.call_id.as_deref() == Some(id);
        let in_kept = |turn: &Arc<CachedTurn>| turn.call_ids.iter().any(|call| call == id);
        own.iter().any(answers)
            || units.iter().any(|unit| match unit {
                Unit::Kept(turn) => in_kept(turn),
                Unit::Read(items) => items.iter().any(answers),
            })
            || run.is_some_and(|run| run.turns().any(in_kept))
    })
}

fn is_call(item: &InputItem<'_>) -> bool {
    matches!(
        item.classify(),
        ItemKind::FunctionCall | ItemKind::CustomToolCall
    )
}

fn is_user_message(item: &InputItem<'_>) -> bool {
    item.classify() == ItemKind::Message && item.role.as_deref() == Some("user")
}

/// Whether `items` translated first give the same as after anything that
/// ended clean: the first of them to make a message makes a new one, where
/// a call would join an assistant message before it (reasoning and the
/// items that make nothing are passed over to find it).
fn starts_fresh(items: &[InputItem<'_>]) -> bool {
    let first = items.iter().find(|item| {
        !matches!(
            item.classify(),
            ItemKind::Reasoning | ItemKind::ConfigurationUpdate | ItemKind::Other
        )
    });
    first.is_none_or(|item| {
        matches!(
            item.classify(),
            ItemKind::Message
                | ItemKind::FunctionCallOutput
                | ItemKind::CustomToolCallOutput
                | ItemKind::AgentMessage
        )
    })
}

/// Items whose meaning reaches beyond their turn: compactions (what they
/// supersede), tools offered in the conversation (the tool names of every
/// turn), and references (resolved against the store).
fn reaches_beyond(item: &InputItem<'_>) -> bool {
    matches!(
        item.classify(),
        ItemKind::Compaction
            | ItemKind::ContextCompaction
            | ItemKind::CompactionTrigger
            | ItemKind::AdditionalTools
            | ItemKind::ToolSearchOutput
            | ItemKind::ItemReference
    )
}
