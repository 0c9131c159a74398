//! The choice on its own: placement, stickiness, the bound on load,
//! ejection and return.

use std::time::{Duration, Instant};

use wirebridge_convert::affinity::StableHasher;

use super::*;

const SETTINGS: Settings = Settings {
    load_factor: 1.25,
    move_slack: 2,
    eject_after: 3,
    backoff: Duration::from_secs(10),
    max_pins: 1024,
};

fn table(names: &[&str]) -> Table {
    let ids = names.iter().map(|n| StableHasher::hash_text(n)).collect();
    Table::new(ids, SETTINGS)
}

fn three() -> Table {
    table(&["http://a:1/v1", "http://b:1/v1", "http://c:1/v1"])
}

fn key(n: u64) -> u64 {
    StableHasher::hash_text(&format!("conversation {n}"))
}

fn ready(table: &Table) -> Vec<bool> {
    table.ready().into_iter().flatten().collect()
}

fn ids(names: &[&str]) -> Vec<u64> {
    names.iter().map(|n| StableHasher::hash_text(n)).collect()
}

fn chosen(table: &Table, key: u64, now: Instant) -> usize {
    table.choose(Some(key), now).attempts[0]
}

#[test]
fn a_key_stays_where_it_was_placed() {
    let table = three();
    let now = Instant::now();
    let placed: Vec<usize> = (0..20).map(|n| chosen(&table, key(n), now)).collect();
    for _ in 0..5 {
        let again: Vec<usize> = (0..20).map(|n| chosen(&table, key(n), now)).collect();
        assert_eq!(again, placed);
    }
    // Every replica is tried before a request that cannot be sent fails.
    let mut attempts = table.choose(Some(key(0)), now).attempts;
    attempts.sort_unstable();
    assert_eq!(attempts, vec![0, 1, 2]);
}

#[test]
fn first_turns_spread_evenly_over_three_replicas() {
    // A bare hash may put most of a handful of keys on one replica, and
    // the fewer-pinned of two choices three of six on one in about a third
    // of batches: more conversations than a llama-server replica's two
    // slots. Placed within their share, every batch is even at each step.
    for batch in 0..200 {
        let table = three();
        let now = Instant::now();
        let mut counts = [0; 3];
        for n in 0..6 {
            counts[chosen(&table, key(batch * 6 + n), now)] += 1;
            let placed = n as usize + 1;
            let most = placed.div_ceil(3);
            assert!(
                counts.iter().all(|&c| c <= most),
                "batch {batch}, {placed} placed: {counts:?}"
            );
        }
    }
}

#[test]
fn most_keys_still_go_to_their_first_choice() {
    // Within 10% of an even share, a thousand keys mostly follow their
    // first choice (977 here; the fewer-pinned of two choices: under 900),
    // the rendezvous order every process computes alike.
    let table = three();
    let now = Instant::now();
    let first_choice = |n: u64| {
        let mut order = [0usize, 1, 2];
        let weights: Vec<u64> = ids(&["http://a:1/v1", "http://b:1/v1", "http://c:1/v1"])
            .into_iter()
            .map(|id| weight(key(n), id))
            .collect();
        order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
        order[0]
    };
    let mut counts = [0usize; 3];
    let mut followed = 0;
    for n in 0..1000 {
        let replica = chosen(&table, key(n), now);
        counts[replica] += 1;
        followed += usize::from(replica == first_choice(n));
    }
    assert!(counts.iter().all(|&c| c <= 366), "{counts:?}");
    assert!(followed >= 950, "{followed} of 1000 on their first choice");
}

#[test]
fn the_share_is_exact_for_a_few_and_within_a_tenth_for_many() {
    assert_eq!(pin_share(1, 3), 1);
    assert_eq!(pin_share(6, 3), 2);
    assert_eq!(pin_share(7, 3), 3);
    assert_eq!(pin_share(1000, 3), 366);
    assert_eq!(pin_share(5, 1), 5);
}

#[test]
fn every_process_puts_a_new_key_on_the_same_replica() {
    // Two processes, the replicas listed in other orders: with no pins of
    // their own, each puts a key first where its weights say.
    let names = ["http://a:1/v1", "http://b:1/v1", "http://c:1/v1"];
    let reordered = ["http://c:1/v1", "http://a:1/v1", "http://b:1/v1"];
    let now = Instant::now();
    for n in 0..100 {
        let (one, other) = (table(&names), table(&reordered));
        let here = names[chosen(&one, key(n), now)];
        let there = reordered[chosen(&other, key(n), now)];
        assert_eq!(here, there, "key {n}");
    }
}

#[test]
fn a_replica_far_past_the_bound_passes_its_key_on() {
    let table = three();
    let now = Instant::now();
    let home = chosen(&table, key(1), now);
    // One request in flight there, none elsewhere: within the bound
    // (1.25 × 1/3 + 1).
    table.start(home);
    let choice = table.choose(Some(key(1)), now);
    assert_eq!((choice.attempts[0], choice.spilled_from), (home, None));
    // Six: the mean is 2, the bound 1.25 × 2 + 1 = 3.5, and six is past
    // it by more than the slack of 2.
    for _ in 0..5 {
        table.start(home);
    }
    let choice = table.choose(Some(key(1)), now);
    assert_ne!(choice.attempts[0], home);
    assert_eq!(choice.spilled_from, Some(home));
    // Re-pinned where it went: it stays there once the load is gone.
    for _ in 0..6 {
        table.finish(home);
    }
    assert_eq!(table.in_flight(), vec![0, 0, 0]);
    assert_eq!(chosen(&table, key(1), now), choice.attempts[0]);
    // Within the bound, a key is not moved: two in flight on each.
    let other = chosen(&table, key(2), now);
    for replica in [0, 1, 2, 0, 1, 2] {
        table.start(replica);
    }
    let choice = table.choose(Some(key(2)), now);
    assert_eq!((choice.attempts[0], choice.spilled_from), (other, None));
}

#[test]
fn a_pinned_key_stays_on_a_replica_a_little_past_the_bound() {
    // Two in flight on a key's replica, the others idle: past the bound
    // (1.25 × 2/3 + 1 = 1.83), but moving would make another replica
    // evaluate the whole conversation again, which costs more than waiting.
    let table = three();
    let now = Instant::now();
    let home = chosen(&table, key(1), now);
    for in_flight in 1..=5 {
        table.start(home);
        let choice = table.choose(Some(key(1)), now);
        assert_eq!(
            (choice.attempts[0], choice.spilled_from),
            (home, None),
            "{in_flight} in flight"
        );
    }
    // Six: the mean is 2, the bound 3.5, and six is past it by more than
    // the slack: the replica is overloaded, and the key moves.
    table.start(home);
    let choice = table.choose(Some(key(1)), now);
    assert_ne!(choice.attempts[0], home);
    assert_eq!(choice.spilled_from, Some(home));
}

#[test]
fn a_pinned_key_stays_at_four_in_flight_against_a_mean_of_one_and_six_tenths() {
    // Five replicas, four requests on the key's own and one on each other:
    // the mean is 8/5, the bound 1.25 × 1.6 + 1 = 3, and four is within
    // the slack of 2 past it.
    let table = table(&[
        "http://a:1/v1",
        "http://b:1/v1",
        "http://c:1/v1",
        "http://d:1/v1",
        "http://e:1/v1",
    ]);
    let now = Instant::now();
    let home = chosen(&table, key(7), now);
    for replica in 0..5 {
        let load = if replica == home { 4 } else { 1 };
        for _ in 0..load {
            table.start(replica);
        }
    }
    let choice = table.choose(Some(key(7)), now);
    assert_eq!((choice.attempts[0], choice.spilled_from), (home, None));
}

#[test]
fn new_keys_spill_where_pinned_keys_stay() {
    // Under one load, a key with a pin stays and a key seen for the first
    // time is placed within the bound: the slack is for moves only.
    let table = three();
    let now = Instant::now();
    let home = chosen(&table, key(1), now);
    table.start(home);
    table.start(home);
    for n in 100..160 {
        let choice = table.choose(Some(key(n)), now);
        assert_ne!(
            choice.attempts[0], home,
            "key {n} placed on a replica past the bound"
        );
        let again = table.choose(Some(key(1)), now);
        assert_eq!((again.attempts[0], again.spilled_from), (home, None));
    }
}

#[test]
fn only_the_keys_of_an_ejected_replica_move() {
    let table = three();
    let now = Instant::now();
    let placed: Vec<usize> = (0..60).map(|n| chosen(&table, key(n), now)).collect();
    let dead = placed[0];
    assert_eq!(table.report(dead, Outcome::Failed, now), None);
    assert_eq!(table.report(dead, Outcome::Failed, now), None);
    assert_eq!(table.report(dead, Outcome::Failed, now), Some(3));
    assert!(!ready(&table)[dead]);
    for (n, &before) in placed.iter().enumerate() {
        let after = chosen(&table, key(n as u64), now);
        match before == dead {
            true => assert_ne!(after, dead, "key {n} stayed on the ejected replica"),
            false => assert_eq!(after, before, "key {n} moved off a healthy replica"),
        }
    }
    // Back after the back-off, on probation: one failure ejects it again.
    let later = now + Duration::from_secs(11);
    let choice = table.choose(Some(key(0)), later);
    assert_eq!(choice.returned, vec![dead]);
    assert!(ready(&table)[dead]);
    assert_eq!(table.report(dead, Outcome::Failed, later), Some(3));
}

#[test]
fn an_answer_resets_the_failures() {
    let table = three();
    let now = Instant::now();
    for _ in 0..10 {
        assert_eq!(table.report(1, Outcome::Failed, now), None);
        table.report(1, Outcome::Answered, now);
    }
    assert_eq!(ready(&table), vec![true; 3]);
}

#[test]
fn never_more_than_half_are_ejected() {
    let table = three();
    let now = Instant::now();
    let mut ejected = 0;
    for replica in [0, 1] {
        for _ in 0..3 {
            ejected += usize::from(table.report(replica, Outcome::Failed, now).is_some());
        }
    }
    assert_eq!(ejected, 1);
    // The second stays in, though failing, and is not ready.
    assert_eq!(ready(&table), vec![false, false, true]);
    let attempts = table.choose(None, now).attempts;
    assert!(
        attempts.contains(&1) && !attempts.contains(&0),
        "{attempts:?}"
    );
}

#[test]
fn requests_without_a_key_go_round() {
    let table = three();
    let now = Instant::now();
    let firsts: Vec<usize> = (0..6)
        .map(|_| table.choose(None, now).attempts[0])
        .collect();
    assert_eq!(firsts, vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn the_pins_are_bounded() {
    let table = Table::new(
        vec![1, 2],
        Settings {
            max_pins: 8,
            ..SETTINGS
        },
    );
    let now = Instant::now();
    for n in 0..1000 {
        chosen(&table, key(n), now);
    }
    let state = table.lock();
    assert!(state.pins.current.len() + state.pins.previous.len() <= 8);
    let counted: usize = state.slots.iter().map(|s| s.pins).sum();
    assert_eq!(
        counted,
        state.pins.current.len() + state.pins.previous.len()
    );
}

#[test]
fn a_replica_that_joins_takes_new_keys_and_no_pinned_one() {
    let table = table(&["http://a:1/v1", "http://b:1/v1"]);
    let now = Instant::now();
    let placed: Vec<usize> = (0..60).map(|n| chosen(&table, key(n), now)).collect();
    let (slots, left) = table.update(&ids(&["http://b:1/v1", "http://a:1/v1", "http://c:1/v1"]));
    assert_eq!(
        slots,
        vec![Placed::Kept(1), Placed::Kept(0), Placed::Joined(2)]
    );
    assert!(left.is_empty());
    for (n, &before) in placed.iter().enumerate() {
        assert_eq!(chosen(&table, key(n as u64), now), before, "key {n} moved");
    }
    // New keys find it: by their order, and by its fewer pins.
    let joined = (100..160)
        .filter(|&n| chosen(&table, key(n), now) == 2)
        .count();
    assert!(joined >= 20, "{joined} of 60 new keys on the new replica");
    assert_eq!(ready(&table), vec![true; 3]);
}

#[test]
fn only_the_keys_of_a_replica_that_leaves_move() {
    let table = three();
    let now = Instant::now();
    let placed: Vec<usize> = (0..60).map(|n| chosen(&table, key(n), now)).collect();
    let (slots, left) = table.update(&ids(&["http://a:1/v1", "http://c:1/v1"]));
    assert_eq!(slots, vec![Placed::Kept(0), Placed::Kept(2)]);
    assert_eq!(left, vec![1]);
    for (n, &before) in placed.iter().enumerate() {
        let after = table.choose(Some(key(n as u64)), now).attempts;
        assert!(
            !after.contains(&1),
            "key {n} may still go to the replica that left"
        );
        if before != 1 {
            assert_eq!(after[0], before, "key {n} moved off a replica still there");
        }
    }
    assert_eq!(table.ready(), vec![Some(true), None, Some(true)]);
    assert!((0..6).all(|_| table.choose(None, now).attempts[0] != 1));
}

#[test]
fn a_slot_is_taken_again_once_its_requests_are_over() {
    let table = three();
    table.start(1);
    let (_, left) = table.update(&ids(&["http://a:1/v1", "http://c:1/v1"]));
    assert_eq!(left, vec![1]);
    // Its request still runs: a replica that joins gets a slot of its own.
    let (slots, _) = table.update(&ids(&["http://a:1/v1", "http://c:1/v1", "http://d:1/v1"]));
    assert_eq!(slots[2], Placed::Joined(3));
    // A failure reported by the request that outlived its replica is
    // nobody's.
    for _ in 0..3 {
        assert_eq!(table.report(1, Outcome::Failed, Instant::now()), None);
    }
    table.finish(1);
    let (slots, _) = table.update(&ids(&[
        "http://a:1/v1",
        "http://c:1/v1",
        "http://d:1/v1",
        "http://e:1/v1",
    ]));
    assert_eq!(slots[3], Placed::Joined(1));
    assert_eq!(ready(&table), vec![true; 4]);
}

#[test]
fn probes_eject_a_replica_and_return_it_before_its_back_off_ends() {
    let table = three();
    let now = Instant::now();
    assert_eq!(table.probed(2, false, now), Probed::Unchanged);
    assert_eq!(table.probed(2, false, now), Probed::Unchanged);
    assert_eq!(table.probed(2, false, now), Probed::Ejected(3));
    assert_eq!(ready(&table), vec![true, true, false]);
    // A second later, far from the end of the 10 s back-off, it answers.
    let soon = now + Duration::from_secs(1);
    assert_eq!(table.probed(2, true, soon), Probed::Returned);
    assert_eq!(ready(&table), vec![true, true, true]);
    assert!(table.choose(Some(key(0)), soon).attempts.contains(&2));
    // An answer to a probe does not clear the failures of requests.
    table.report(1, Outcome::Failed, soon);
    table.report(1, Outcome::Failed, soon);
    assert_eq!(table.probed(1, true, soon), Probed::Unchanged);
    assert_eq!(table.report(1, Outcome::Failed, soon), Some(3));
}
