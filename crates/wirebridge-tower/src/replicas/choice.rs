//! Which replica serves a request: the replicas' loads, health and pins,
//! behind one lock, and the choice made from them.
//!
//! A key's replicas are ordered by rendezvous hashing (the highest weight
//! of `key × replica` first), which every process computes alike without
//! sharing anything, and which moves only the keys of a replica that
//! leaves. The order is walked with a bound on load: a replica with more
//! requests in flight than `load_factor ×` the mean, plus one, is passed
//! over. A key seen for the first time goes to the first replica of its
//! order within that bound that holds less than its share of the pinned
//! conversations ([`pin_share`]), so that a few conversations spread evenly
//! over the set instead of following the hash alone: two of six on each of
//! three replicas, where a bare hash (or the fewer-pinned of two choices)
//! puts three on one replica in a third of cases, more than the two slots
//! a llama-server replica serves at once. Most keys still land on their
//! first choice, which every process computes alike.
//!
//! A key is pinned where it was placed, and held to a higher bound: its
//! replica holds the conversation so far in cache, and a move makes the
//! next one evaluate all of it again, which costs more than waiting behind
//! a request or two. So a pinned key moves only when its replica is past
//! the bound by more than `move_slack` requests (or is ejected).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wirebridge_convert::affinity::mix;

/// How far past an even share of the pinned conversations a replica may
/// hold pins before a new key passes it over: 10%, once there are enough
/// conversations for 10% to be one (with a few, the share is exact).
const PIN_SHARE_SLACK: f64 = 1.1;

/// The most conversations one of `replicas` may hold once `pinned` are
/// placed: an even share, rounded up, or within [`PIN_SHARE_SLACK`] of it.
fn pin_share(pinned: usize, replicas: usize) -> usize {
    let even = pinned as f64 / replicas.max(1) as f64;
    (even.ceil() as usize).max((PIN_SHARE_SLACK * even).floor() as usize)
}

/// How the choice is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub(crate) load_factor: f64,
    /// Requests in flight past the bound that a pinned key's replica may
    /// hold before the key moves.
    pub(crate) move_slack: usize,
    pub(crate) eject_after: usize,
    pub(crate) backoff: Duration,
    pub(crate) max_pins: usize,
}

/// The replicas' state, and the choices made from it.
pub(crate) struct Table {
    pub(crate) settings: Settings,
    state: Mutex<State>,
}

struct State {
    slots: Vec<Slot>,
    pins: Pins,
    /// Where the round-robin of requests without a key goes next.
    next: usize,
}

#[derive(Debug, Default, Clone)]
struct Slot {
    /// The replica's identity in the rendezvous weights: a hash of its
    /// name, so that processes listing the replicas in another order
    /// still agree.
    id: u64,
    /// In the set: a replica that left keeps its slot (and index) until
    /// its last request is over and a new replica takes it.
    present: bool,
    in_flight: usize,
    pins: usize,
    failures: usize,
    ejected_until: Option<Instant>,
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// The replicas to try, in order: the chosen one, then the rest of the
    /// key's order for a request that could not be sent.
    pub(crate) attempts: Vec<usize>,
    /// The replica the key was pinned to, when it was over the bound and
    /// the request went elsewhere.
    pub(crate) spilled_from: Option<usize>,
    /// Replicas whose back-off ended with this choice: tried again.
    pub(crate) returned: Vec<usize>,
}

/// Where a replica of an updated set is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    /// In the set already, in this slot.
    Kept(usize),
    /// New to the set, in this slot.
    Joined(usize),
}

impl Placed {
    /// The replica's slot.
    pub(crate) fn slot(self) -> usize {
        match self {
            Placed::Kept(slot) | Placed::Joined(slot) => slot,
        }
    }
}

/// What a probe changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probed {
    /// Nothing the events tell.
    Unchanged,
    /// The replica was ejected, after this many failures in a row.
    Ejected(usize),
    /// The replica, ejected, answered: it is in again.
    Returned,
}

/// What an attempt on a replica came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// An answer that is not a 5xx.
    Answered,
    /// A connect failure or a 5xx.
    Failed,
}

impl Table {
    /// A table of replicas named by `ids` (hashes of their names).
    pub(crate) fn new(ids: Vec<u64>, settings: Settings) -> Self {
        let slots = ids
            .into_iter()
            .map(|id| Slot {
                id,
                present: true,
                ..Slot::default()
            })
            .collect();
        Self {
            settings,
            state: Mutex::new(State {
                slots,
                pins: Pins::new(settings.max_pins),
                next: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent at every await-free step: a panic
        // elsewhere while the lock was held leaves nothing half-done.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the request of `key` (or of no key: round-robin) goes, and
    /// the key pinned there.
    pub(crate) fn choose(&self, key: Option<u64>, now: Instant) -> Choice {
        let mut state = self.lock();
        let state = &mut *state;
        let mut returned = Vec::new();
        for (index, slot) in state.slots.iter_mut().enumerate() {
            if slot.ejected_until.is_some_and(|until| until <= now) {
                slot.ejected_until = None;
                // On probation: one more failure ejects it again.
                slot.failures = self.settings.eject_after.saturating_sub(1);
                returned.push(index);
            }
        }
        let present: Vec<usize> = (0..state.slots.len())
            .filter(|&i| state.slots[i].present)
            .collect();
        let mut healthy: Vec<usize> = present
            .iter()
            .copied()
            .filter(|&i| state.slots[i].ejected_until.is_none())
            .collect();
        if healthy.is_empty() {
            healthy = present;
        }
        let total: usize = healthy.iter().map(|&i| state.slots[i].in_flight).sum();
        let bound = bound(self.settings.load_factor, total, healthy.len());
        let within = |slots: &[Slot], i: usize| slots[i].in_flight as f64 <= bound;
        // A pinned key's replica holds its history: moving it costs a whole
        // evaluation of that history, so it is moved only past the slack.
        let keeps = |slots: &[Slot], i: usize| {
            slots[i].in_flight as f64 <= bound + self.settings.move_slack as f64
        };

        let Some(key) = key else {
            let start = state.next % healthy.len();
            state.next = state.next.wrapping_add(1);
            let mut attempts: Vec<usize> = healthy[start..]
                .iter()
                .chain(&healthy[..start])
                .copied()
                .collect();
            if let Some(at) = attempts.iter().position(|&i| within(&state.slots, i)) {
                attempts.rotate_left(at);
            }
            return Choice {
                attempts,
                spilled_from: None,
                returned,
            };
        };

        let mut order = healthy;
        order.sort_by_key(|&i| std::cmp::Reverse(weight(key, state.slots[i].id)));
        let pinned = state.pins.get(key).filter(|i| order.contains(i));
        let mut spilled_from = None;
        let chosen = match pinned {
            Some(pinned) if keeps(&state.slots, pinned) => pinned,
            Some(pinned) => {
                spilled_from = Some(pinned);
                let next = order.iter().copied().find(|&i| within(&state.slots, i));
                next.unwrap_or(pinned)
            }
            None => {
                let pinned: usize = order.iter().map(|&i| state.slots[i].pins).sum();
                let share = pin_share(pinned + 1, order.len());
                let candidates = || order.iter().copied().filter(|&i| within(&state.slots, i));
                // The first within its share; when every replica within
                // the load bound is at its share, the first of the fewest.
                candidates()
                    .find(|&i| state.slots[i].pins < share)
                    .or_else(|| candidates().min_by_key(|&i| state.slots[i].pins))
                    .unwrap_or(order[0])
            }
        };
        if spilled_from == Some(chosen) {
            spilled_from = None;
        }
        if pinned != Some(chosen) {
            state.pins.set(key, chosen, &mut state.slots);
        }
        order.retain(|&i| i != chosen);
        order.insert(0, chosen);
        Choice {
            attempts: order,
            spilled_from,
            returned,
        }
    }

    /// Pins `key` to `replica`: the request went there after the chosen
    /// one could not be reached. A replica that left meanwhile gets no
    /// pin.
    pub(crate) fn repin(&self, key: u64, replica: usize) {
        let mut state = self.lock();
        let state = &mut *state;
        if state.slots[replica].present {
            state.pins.set(key, replica, &mut state.slots);
        }
    }

    /// Makes the set the replicas named by `ids` (at least one), and says
    /// the slot of each: a replica already in the set keeps its slot, its
    /// pins and its health; one that left loses its pins (its keys are
    /// placed again, on the rest) and its slot, once its last request is
    /// over, may be taken by one that joins. A replica that joins holds no
    /// pin: keys pinned elsewhere stay, and new keys find it by their
    /// order.
    pub(crate) fn update(&self, ids: &[u64]) -> (Vec<Placed>, Vec<usize>) {
        let mut state = self.lock();
        let state = &mut *state;
        let mut left = Vec::new();
        for index in 0..state.slots.len() {
            let slot = &mut state.slots[index];
            if slot.present && !ids.contains(&slot.id) {
                slot.present = false;
                slot.failures = 0;
                slot.ejected_until = None;
                state.pins.forget(index, &mut state.slots);
                left.push(index);
            }
        }
        let placed = ids
            .iter()
            .map(|&id| {
                if let Some(index) = state.slots.iter().position(|s| s.present && s.id == id) {
                    return Placed::Kept(index);
                }
                let fresh = Slot {
                    id,
                    present: true,
                    ..Slot::default()
                };
                // A slot whose replica left and whose requests are over, or
                // a new one: the slots stay as many as the most replicas
                // in the set at once, and those still answering.
                let free = state
                    .slots
                    .iter()
                    .position(|s| !s.present && s.in_flight == 0);
                match free {
                    Some(index) => {
                        state.slots[index] = fresh;
                        Placed::Joined(index)
                    }
                    None => {
                        state.slots.push(fresh);
                        Placed::Joined(state.slots.len() - 1)
                    }
                }
            })
            .collect();
        (placed, left)
    }

    /// A request starts on `replica`.
    pub(crate) fn start(&self, replica: usize) {
        self.lock().slots[replica].in_flight += 1;
    }

    /// A request on `replica` is over (its reply ended or was dropped).
    pub(crate) fn finish(&self, replica: usize) {
        let mut state = self.lock();
        let slot = &mut state.slots[replica];
        slot.in_flight = slot.in_flight.saturating_sub(1);
    }

    /// Records what an attempt came to; `Some(failures)` when it ejected
    /// the replica, after that many failures in a row. Never more than
    /// half of the replicas are out at once: past that a failing replica
    /// stays in, since the rest could not take its share.
    pub(crate) fn report(&self, replica: usize, outcome: Outcome, now: Instant) -> Option<usize> {
        let mut state = self.lock();
        let ejected = state
            .slots
            .iter()
            .filter(|s| s.ejected_until.is_some())
            .count();
        let cap = state.slots.iter().filter(|s| s.present).count() / 2;
        let slot = &mut state.slots[replica];
        if !slot.present {
            // An answer from a replica that has left the set since.
            return None;
        }
        match outcome {
            Outcome::Answered => {
                slot.failures = 0;
                None
            }
            Outcome::Failed => {
                slot.failures += 1;
                let due = slot.failures >= self.settings.eject_after;
                if due && slot.ejected_until.is_none() && ejected < cap {
                    slot.ejected_until = Some(now + self.settings.backoff);
                    Some(slot.failures)
                } else {
                    None
                }
            }
        }
    }

    /// Records what an active probe of `replica` found. A failed probe
    /// counts as a failed request does; an answer returns an ejected
    /// replica at once, without waiting for the rest of its back-off, but
    /// does not clear the failures of one still in: a replica that answers
    /// a probe may still fail the requests it is sent.
    pub(crate) fn probed(&self, replica: usize, answered: bool, now: Instant) -> Probed {
        if !answered {
            return match self.report(replica, Outcome::Failed, now) {
                Some(failures) => Probed::Ejected(failures),
                None => Probed::Unchanged,
            };
        }
        let mut state = self.lock();
        let slot = &mut state.slots[replica];
        if slot.present && slot.ejected_until.is_some() {
            slot.ejected_until = None;
            slot.failures = 0;
            return Probed::Returned;
        }
        Probed::Unchanged
    }

    /// The slots of the replicas in the set.
    pub(crate) fn present(&self) -> Vec<usize> {
        let state = self.lock();
        (0..state.slots.len())
            .filter(|&i| state.slots[i].present)
            .collect()
    }

    /// Whether each replica in the set is ready (not ejected, and not
    /// failing as often as ejects), by slot; `None` for a slot whose
    /// replica left the set.
    pub(crate) fn ready(&self) -> Vec<Option<bool>> {
        let eject_after = self.settings.eject_after;
        self.lock()
            .slots
            .iter()
            .map(|s| {
                s.present
                    .then(|| s.ejected_until.is_none() && s.failures < eject_after)
            })
            .collect()
    }

    /// Each replica's requests in flight.
    #[cfg(test)]
    fn in_flight(&self) -> Vec<usize> {
        self.lock().slots.iter().map(|s| s.in_flight).collect()
    }
}

/// The most requests in flight a replica may have and still take one
/// more: `factor ×` the mean over `replicas`, plus one, so that a replica
/// serving one request while the others are idle is not passed over (at
/// low concurrency, moving a conversation costs far more than waiting).
fn bound(factor: f64, in_flight: usize, replicas: usize) -> f64 {
    let mean = in_flight as f64 / replicas.max(1) as f64;
    factor * mean + 1.0
}

/// The rendezvous weight of a key on a replica.
fn weight(key: u64, replica: u64) -> u64 {
    mix(key ^ mix(replica))
}

/// The pins, bounded: two generations, the older dropped whole when the
/// newer fills half the room, and a pin found in the older moved to the
/// newer. A key in use keeps its pin; a key unused for a generation loses
/// it.
struct Pins {
    current: HashMap<u64, usize>,
    previous: HashMap<u64, usize>,
    generation: usize,
}

impl Pins {
    fn new(max: usize) -> Self {
        Self {
            current: HashMap::new(),
            previous: HashMap::new(),
            generation: (max / 2).max(1),
        }
    }

    fn get(&mut self, key: u64) -> Option<usize> {
        if let Some(&replica) = self.current.get(&key) {
            return Some(replica);
        }
        let replica = self.previous.remove(&key)?;
        self.current.insert(key, replica);
        Some(replica)
    }

    /// Drops every pin to `replica`: its keys are placed again.
    fn forget(&mut self, replica: usize, slots: &mut [Slot]) {
        self.current.retain(|_, pinned| *pinned != replica);
        self.previous.retain(|_, pinned| *pinned != replica);
        slots[replica].pins = 0;
    }

    /// Pins `key` to `replica`, counting each replica's pins in `slots`.
    fn set(&mut self, key: u64, replica: usize, slots: &mut [Slot]) {
        let old = self.previous.remove(&key);
        let old = self.current.insert(key, replica).or(old);
        if let Some(old) = old {
            slots[old].pins = slots[old].pins.saturating_sub(1);
        }
        slots[replica].pins += 1;
        if self.current.len() >= self.generation {
            for (_, dropped) in self.previous.drain() {
                slots[dropped].pins = slots[dropped].pins.saturating_sub(1);
            }
            std::mem::swap(&mut self.current, &mut self.previous);
        }
    }
}

#[cfg(test)]
mod tests;
