//! The chain script's reply, read (its layout is the script's, in
//! `scripts.rs`).

use std::vec::IntoIter;

use super::kept::{ChainRead, KeptSlot};
use super::record;
use crate::StoreError;

/// The chain of `id` as the script sent it. A reply of the wrong shape is
/// a corrupt conversation.
pub(super) fn read(id: &str, reply: Vec<Option<Vec<u8>>>) -> Result<ChainRead, StoreError> {
    let corrupt =
        |why: &str| StoreError::Corrupt(format!("the conversation of response {id}: {why}"));
    let mut values = Values {
        values: reply.into_iter(),
    };
    let head = values.text().ok_or_else(|| corrupt("no head"))?;
    let mut head = head.split(' ');
    let conversation = head.next().and_then(|c| c.parse().ok());
    let generation = head.next().map(str::to_owned);
    let (Some(conversation), Some(generation)) = (conversation, generation) else {
        return Err(corrupt("no conversation"));
    };
    let mut number = || head.next().and_then(|n| n.parse::<usize>().ok());
    let left_out = number().ok_or_else(|| corrupt("no count kept"))?;
    let run_count = number().ok_or_else(|| corrupt("no count of runs"))?;
    let mut runs = Vec::with_capacity(run_count.min(1024));
    for _ in 0..run_count {
        match (number(), number()) {
            (Some(first), Some(last)) if first <= last => runs.push((first, last)),
            _ => return Err(corrupt("a run cannot be read")),
        }
    }
    if number().is_some() {
        return Err(corrupt("the head is longer than its counts say"));
    }
    let lead = values.text().ok_or_else(|| corrupt("no lead"))?;
    let sent: usize = runs
        .iter()
        .map(|&(first, last)| (last + 1).saturating_sub(first.max(left_out)))
        .sum();
    let ids = (0..sent)
        .map(|_| {
            values
                .text()
                .ok_or_else(|| corrupt("an id is missing or not UTF-8"))
        })
        .collect::<Result<Vec<String>, _>>()?;
    let mut slots = Vec::with_capacity(sent);
    for id in ids {
        let Some(value) = values.values.next() else {
            return Err(corrupt("the reply is cut short"));
        };
        let turn = value
            .map(|value| record::decode_turn(&id, &value))
            .transpose()?;
        slots.push(KeptSlot {
            id: id.into(),
            turn,
        });
    }
    if values.values.next().is_some() {
        return Err(corrupt("the reply is longer than its counts say"));
    }
    Ok(ChainRead {
        conversation,
        generation,
        left_out,
        lead: Some(lead).filter(|lead| !lead.is_empty()),
        runs,
        sent: slots,
    })
}

struct Values {
    values: IntoIter<Option<Vec<u8>>>,
}

impl Values {
    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.values.next()??).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(values: &[Option<&str>]) -> Vec<Option<Vec<u8>>> {
        values
            .iter()
            .map(|v| v.map(|v| v.as_bytes().to_vec()))
            .collect()
    }

    const TURN: &str = r#"{"v":3,"input":[],"output":[]}"#;

    #[test]
    fn a_reply_is_read_by_its_counts() {
        // Two runs, 0..=1 and 4..=5, the first two slots left out.
        let read = read(
            "resp_c",
            reply(&[
                Some("7 1.2.3 2 2 0 1 4 5"),
                Some("resp_x"),
                Some("resp_b"),
                Some("resp_c"),
                None,
                Some(TURN),
            ]),
        )
        .unwrap();
        assert_eq!(read.conversation, 7);
        assert_eq!(read.left_out, 2);
        assert_eq!(read.lead.as_deref(), Some("resp_x"));
        assert_eq!(read.runs, [(0, 1), (4, 5)]);
        let sent: Vec<(&str, bool)> = read
            .sent
            .iter()
            .map(|s| (&*s.id, s.turn.is_some()))
            .collect();
        assert_eq!(sent, [("resp_b", false), ("resp_c", true)]);
    }

    #[test]
    fn a_reply_of_the_wrong_shape_is_corrupt() {
        let cases: [&[Option<&str>]; 7] = [
            &[Some("7 g 0")],
            &[Some("x g 0 1 0 0"), Some("")],
            &[Some("7 g 0 1 3 1"), Some("")],
            &[Some("7 g 0 1 0 0 9"), Some(""), Some("resp_a"), Some(TURN)],
            &[Some("7 g 0 1 0 0"), Some(""), Some("resp_a")],
            &[
                Some("7 g 0 1 0 0"),
                Some(""),
                Some("resp_a"),
                Some(TURN),
                Some("more"),
            ],
            &[Some("7 g 0 1 0 0"), Some(""), Some("resp_a"), Some("{")],
        ];
        for case in cases {
            let got = read("resp_a", reply(case));
            assert!(
                matches!(got, Err(StoreError::Corrupt(_))),
                "{case:?}: {got:?}"
            );
        }
    }
}
