//! The chain script's replies, read (their layout is the script's, in
//! `script.rs`). A reply of the wrong shape is a corrupt conversation.

use std::vec::IntoIter;

use crate::StoreError;

/// The values of a reply as Redis sends them (nil as `None`).
pub(super) type Values = Vec<Option<Vec<u8>>>;

/// What a first or walk piece found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Walked {
    /// The conversation changed (or went) since the chain's first piece.
    Changed,
    /// A piece of the walk.
    Piece(WalkPiece),
}

/// A piece of the walk of a chain's runs.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct WalkPiece {
    pub(super) conversation: u64,
    pub(super) generation: String,
    /// How many first slots the reader keeps, left out of the walk.
    pub(super) kept: usize,
    /// Where the walk goes on, or `None` once it ended.
    pub(super) cursor: Option<Cursor>,
    /// Once the walk ended: the nearest ancestor kept elsewhere.
    pub(super) lead: Option<String>,
    /// The runs walked, newest first.
    pub(super) segments: Vec<Segment>,
    /// The turns of the chain's first slots (a first piece that walked it
    /// all), oldest first.
    pub(super) turns: Values,
}

/// Where the walk of a chain stands between two pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cursor {
    /// The next slot to read, going down.
    pub(super) at: usize,
    /// The first and last slot of the run holding it.
    pub(super) start: usize,
    pub(super) pos: usize,
    /// The run's parent (`+<id>` or `-`).
    pub(super) up: String,
    /// The id its last slot must hold.
    pub(super) expected: String,
}

/// The slots a piece sent of one run: those from `from` down.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) start: usize,
    pub(super) pos: usize,
    pub(super) from: usize,
    pub(super) slots: Vec<Slot>,
}

/// A slot of a chain, as the walk sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Slot {
    /// The response it holds.
    pub(super) id: String,
    /// The bytes of its turn: 0 when gone.
    pub(super) size: usize,
}

/// A first or walk piece's reply: `None` for nil (no chain).
pub(super) fn walked(id: &str, reply: Option<Values>) -> Result<Option<Walked>, StoreError> {
    let corrupt =
        |why: &str| StoreError::Corrupt(format!("the conversation of response {id}: {why}"));
    let Some(reply) = reply else {
        return Ok(None);
    };
    let mut values = Reader(reply.into_iter());
    let head = values.text().ok_or_else(|| corrupt("no head"))?;
    if head == "c" {
        return Ok(Some(Walked::Changed));
    }
    let mut head = head.split(' ');
    let conversation = head.next().and_then(|c| c.parse().ok());
    let generation = head.next().map(str::to_owned);
    let (Some(conversation), Some(generation)) = (conversation, generation) else {
        return Err(corrupt("no conversation"));
    };
    let mut number = || head.next().and_then(|n| n.parse::<usize>().ok());
    let (Some(kept), Some(segment_count), Some(turn_count), None) =
        (number(), number(), number(), number())
    else {
        return Err(corrupt("a head of the wrong shape"));
    };
    let (Some(at), Some(up), Some(expected)) = (values.text(), values.text(), values.text()) else {
        return Err(corrupt("no place in the walk"));
    };
    let (cursor, lead) = if at.is_empty() {
        (None, Some(up).filter(|lead| !lead.is_empty()))
    } else {
        let mut at = at.split(' ').map(|n| n.parse::<usize>().ok());
        let (Some(Some(at)), Some(Some(start)), Some(Some(pos)), None) =
            (at.next(), at.next(), at.next(), at.next())
        else {
            return Err(corrupt("a place in the walk of the wrong shape"));
        };
        let cursor = Cursor {
            at,
            start,
            pos,
            up,
            expected,
        };
        (Some(cursor), None)
    };
    if segment_count == 0 {
        return Err(corrupt("a piece that walked nothing"));
    }
    let mut segments = Vec::with_capacity(segment_count.min(1024));
    for _ in 0..segment_count {
        let head = values.text().ok_or_else(|| corrupt("no segment"))?;
        let mut head = head.split(' ').map(|n| n.parse::<usize>().ok());
        let (Some(Some(start)), Some(Some(pos)), Some(Some(from)), Some(Some(count)), None) = (
            head.next(),
            head.next(),
            head.next(),
            head.next(),
            head.next(),
        ) else {
            return Err(corrupt("a segment of the wrong shape"));
        };
        if start > pos || from > pos || count > from + 1 {
            return Err(corrupt("a segment out of its run"));
        }
        let slots = (0..count)
            .map(|_| {
                let value = values.text();
                let (size, id) = value
                    .as_deref()
                    .and_then(|value| value.split_once(' '))
                    .ok_or_else(|| corrupt("a slot is missing or not UTF-8"))?;
                let size = size
                    .parse()
                    .map_err(|_| corrupt("a turn's size is not a number"))?;
                Ok(Slot {
                    id: id.to_owned(),
                    size,
                })
            })
            .collect::<Result<Vec<Slot>, StoreError>>()?;
        segments.push(Segment {
            start,
            pos,
            from,
            slots,
        });
    }
    let turns: Values = values.0.collect();
    if turns.len() != turn_count {
        return Err(corrupt(
            "the reply's turns are not as many as its head says",
        ));
    }
    Ok(Some(Walked::Piece(WalkPiece {
        conversation,
        generation,
        kept,
        cursor,
        lead,
        segments,
        turns,
    })))
}

struct Reader(IntoIter<Option<Vec<u8>>>);

impl Reader {
    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.0.next()??).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(values: &[Option<&str>]) -> Values {
        values
            .iter()
            .map(|v| v.map(|v| v.as_bytes().to_vec()))
            .collect()
    }

    const TURN: &str = r#"{"v":3,"input":[],"output":[]}"#;

    fn piece(values: &[Option<&str>]) -> WalkPiece {
        match walked("resp_c", Some(reply(values))) {
            Ok(Some(Walked::Piece(piece))) => piece,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_walk_piece_is_read_by_its_counts() {
        // Two runs, 4..=5 then 0..=1, the first two slots kept; the walk
        // ended, and the turns of the two slots sent follow.
        let read = piece(&[
            Some("7 1.2.3 2 2 2"),
            Some(""),
            Some("resp_x"),
            Some(""),
            Some("4 5 5 2"),
            Some("30 resp_c"),
            Some("0 resp b"),
            Some("0 1 1 0"),
            None,
            Some(TURN),
        ]);
        assert_eq!((read.conversation, read.kept), (7, 2));
        assert_eq!(read.generation, "1.2.3");
        assert_eq!(read.cursor, None);
        assert_eq!(read.lead.as_deref(), Some("resp_x"));
        let runs: Vec<(usize, usize, usize, usize)> = read
            .segments
            .iter()
            .map(|s| (s.start, s.pos, s.from, s.slots.len()))
            .collect();
        assert_eq!(runs, [(4, 5, 5, 2), (0, 1, 1, 0)]);
        let slots: Vec<(&str, usize)> = read.segments[0]
            .slots
            .iter()
            .map(|slot| (slot.id.as_str(), slot.size))
            .collect();
        assert_eq!(slots, [("resp_c", 30), ("resp b", 0)]);
        assert_eq!(read.turns, reply(&[None, Some(TURN)]));
    }

    #[test]
    fn a_walk_that_goes_on_says_where() {
        let mut values = vec![
            Some("7  0 1 0"),
            Some("3 0 9"),
            Some("-"),
            Some("resp_c"),
            Some("0 9 9 6"),
        ];
        values.extend(["9 i9", "9 i8", "9 i7", "9 i6", "9 i5", "9 i4"].map(Some));
        let read = piece(&values);
        assert_eq!(read.generation, "", "a conversation of no generation");
        let cursor = read.cursor.expect("goes on");
        assert_eq!((cursor.at, cursor.start, cursor.pos), (3, 0, 9));
        assert_eq!((&*cursor.up, &*cursor.expected), ("-", "resp_c"));
        assert_eq!(read.lead, None);
        assert!(read.turns.is_empty());
    }

    #[test]
    fn changed_and_no_chain_are_told_apart() {
        assert_eq!(walked("a", None), Ok(None));
        assert_eq!(
            walked("a", Some(reply(&[Some("c")]))),
            Ok(Some(Walked::Changed))
        );
    }

    #[test]
    fn a_reply_of_the_wrong_shape_is_corrupt() {
        let walk = [Some("7 g 0 1 0"), Some(""), Some(""), Some("")];
        let with = |tail: &[Option<&'static str>]| {
            let mut values = walk.to_vec();
            values.extend_from_slice(tail);
            values
        };
        let cases: Vec<Vec<Option<&str>>> = vec![
            vec![Some("7 g 0")],
            vec![Some("x g 0 1 0"), Some(""), Some(""), Some("")],
            vec![Some("7 g 0 1 0 9"), Some(""), Some(""), Some("")],
            vec![Some("7 g 0 1 0"), Some("3 0"), Some("-"), Some("a")],
            vec![Some("7 g 0 0 0"), Some(""), Some(""), Some("")],
            // A run whose first slot is after its last.
            with(&[Some("3 1 1 1"), Some("1 a")]),
            // Fewer slots than the segment says.
            with(&[Some("0 0 0 1")]),
            // A slot without its size.
            with(&[Some("0 0 0 1"), Some("a")]),
            with(&[Some("0 0 0 1"), Some("x a")]),
            // A turn more than the head says.
            with(&[Some("0 0 0 1"), Some("1 a"), Some(TURN)]),
        ];
        for case in cases {
            let got = walked("resp_a", Some(reply(&case)));
            assert!(
                matches!(got, Err(StoreError::Corrupt(_))),
                "{case:?}: {got:?}"
            );
        }
    }
}
