//! Stepping over a whole value in one loop.
//!
//! Most of a request's bytes are values a reader keeps raw without looking
//! inside: tool schemas, arguments, metadata. Read through
//! [`object`](JsonCursor::object) and [`array`](JsonCursor::array), every
//! key and scalar of them costs a call, a closure and a look for
//! whitespace of its own. This walks the value with one loop instead,
//! keeping which brackets are open as bits, and accepts exactly what that
//! walk accepts (the tests hold it to it).

use super::scan::{number_end, string_close};
use super::JsonCursor;
use crate::depth::MAX_DEPTH;

// One bit for each open bracket.
const _: () = assert!(MAX_DEPTH <= u128::BITS as usize);

impl JsonCursor<'_> {
    /// Steps over any value, arrays and objects included, as deep as
    /// [`MAX_DEPTH`] allows. Keys must be free of escapes, as
    /// [`object`](Self::object) reads them.
    pub fn skip_value(&mut self) -> Option<()> {
        let bytes = self.bytes();
        let base = self.depth;
        let mut depth = base;
        // Bit `d` is set when the bracket open at depth `d + 1` is an
        // object's; `object` is the innermost one's, kept apart because it
        // is read after every value.
        let mut objects: u128 = 0;
        let mut object = false;
        let mut padded = false;
        let mut i = self.pos;
        'value: loop {
            i = blank_end(bytes, i, &mut padded);
            match *bytes.get(i)? {
                open @ (b'{' | b'[') => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return None;
                    }
                    object = open == b'{';
                    let bit = 1u128 << (depth - 1);
                    objects = if object {
                        objects | bit
                    } else {
                        objects & !bit
                    };
                    i = blank_end(bytes, i + 1, &mut padded);
                    let close = if object { b'}' } else { b']' };
                    if *bytes.get(i)? == close {
                        depth -= 1;
                        i += 1;
                        object = depth > 0 && objects >> (depth - 1) & 1 == 1;
                    } else if object {
                        i = key_end(bytes, i, &mut padded)?;
                        continue 'value;
                    } else {
                        continue 'value;
                    }
                }
                b'"' => i = string_close(bytes, i + 1, true)?.0,
                b't' => i = word_end(bytes, i, b"true")?,
                b'f' => i = word_end(bytes, i, b"false")?,
                b'n' => i = word_end(bytes, i, b"null")?,
                b'-' | b'0'..=b'9' => i = number_end(bytes, i)?,
                _ => return None,
            }
            // A value ended: a comma goes on to the next, a bracket closes
            // what is open, until the value this began with is whole.
            while depth > base {
                i = blank_end(bytes, i, &mut padded);
                match (*bytes.get(i)?, object) {
                    (b',', true) => {
                        i = blank_end(bytes, i + 1, &mut padded);
                        i = key_end(bytes, i, &mut padded)?;
                        continue 'value;
                    }
                    (b',', false) => {
                        i += 1;
                        continue 'value;
                    }
                    (b'}', true) | (b']', false) => {
                        depth -= 1;
                        i += 1;
                        object = depth > 0 && objects >> (depth - 1) & 1 == 1;
                    }
                    _ => return None,
                }
            }
            self.pos = i;
            self.padded |= padded;
            return Some(());
        }
    }
}

/// The index of the first byte at or after `i` that is not whitespace,
/// noting in `padded` whether there was any.
fn blank_end(bytes: &[u8], mut i: usize, padded: &mut bool) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(i) {
        *padded = true;
        i += 1;
    }
    i
}

/// The index after a key free of escapes, its colon and the whitespace
/// around it, the key's opening quote at `i`.
// Inlined into the loop, with the innermost bracket's kind kept apart from
// the bit stack: Claude Code's request translated to Chat took 167.4 K
// instructions with both, 168.9 K without (callgrind).
#[inline(always)]
fn key_end(bytes: &[u8], i: usize, padded: &mut bool) -> Option<usize> {
    if *bytes.get(i)? != b'"' {
        return None;
    }
    let (end, _) = string_close(bytes, i + 1, false)?;
    let colon = blank_end(bytes, end, padded);
    (*bytes.get(colon)? == b':').then_some(colon + 1)
}

/// The index after `word`, if it is written at `i`.
fn word_end(bytes: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    let end = i + word.len();
    (bytes.get(i..end)? == word).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebridge_testkit::mutate::{edit, mutate, Rng};

    /// The walk `skip_value` replaces: a call for every value, through
    /// `object` and `array`.
    fn walk(c: &mut JsonCursor<'_>) -> Option<()> {
        match c.peek()? {
            b'{' => c.object(|c, _| walk(c)),
            b'[' => c.array(walk),
            _ => c.skip_scalar(),
        }
    }

    /// What each way of stepping over a value at `from` ends with: where it
    /// stopped and whether it saw whitespace, or that it gave up.
    fn both(text: &str, from: usize, depth: usize) -> [Option<(usize, bool)>; 2] {
        let start = JsonCursor {
            text,
            pos: from,
            depth,
            padded: false,
            known: &[],
        };
        let end = |c: JsonCursor<'_>| (c.pos, c.padded, c.depth);
        let mut fast = start.clone();
        let mut slow = start;
        let fast = fast.skip_value().map(|()| end(fast));
        let slow = walk(&mut slow).map(|()| end(slow));
        for (pos, _, d) in fast.iter().chain(&slow) {
            assert!(*pos <= text.len());
            assert_eq!(*d, depth, "{text}");
        }
        [fast.map(|(p, w, _)| (p, w)), slow.map(|(p, w, _)| (p, w))]
    }

    const SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string","description":"The \"file\" to read.\n"},
  "lines" : [1, -2.5e3, 0, true, false, null],"deep":[[{}],[[]],{"a":{"b":[]}}]},
  "required":["path"],"additionalProperties":false}"#;

    #[test]
    fn steps_over_what_the_walk_steps_over() {
        for text in [
            SCHEMA,
            " 1 ",
            "\"x\\u00e9\"",
            "[]",
            "{ }",
            "[ 1 ,2 ]x",
            "{\"a\":1}}",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\\u0062\":1}",
            "{\"a\" 1}",
            "[nul]",
            "[\"\\ud800\"]",
            "-",
            "",
        ] {
            let [fast, slow] = both(text, 0, 0);
            assert_eq!(fast, slow, "{text}");
        }
        assert_eq!(both(SCHEMA, 0, 0)[0], Some((SCHEMA.len(), true)));
    }

    #[test]
    fn nests_as_deep_as_the_walk_allows() {
        for depth in [0, 1, 60] {
            for levels in [
                MAX_DEPTH - depth - 1,
                MAX_DEPTH - depth,
                MAX_DEPTH - depth + 1,
            ] {
                for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
                    let text = open.repeat(levels) + "0" + &close.repeat(levels);
                    let [fast, slow] = both(&text, 0, depth);
                    assert_eq!(fast, slow, "{depth} {levels} {open}");
                    assert_eq!(fast.is_some(), depth + levels <= MAX_DEPTH);
                }
            }
        }
    }

    #[test]
    fn mutated_values_are_stepped_over_as_the_walk_does() {
        let alphabet = b"{}[]\":,\\ \n0123456789.eE+-tfnulrsax\x01";
        let mut rng = Rng(0x243f_6a88_85a3_08d3);
        let mut stepped = 0;
        for round in 0..40_000 {
            let bytes = if round % 2 == 0 {
                edit(SCHEMA.as_bytes(), alphabet, 1 + rng.below(3), &mut rng)
            } else {
                mutate(SCHEMA.as_bytes(), &mut rng)
            };
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            // From the start, and from inside the object at one level deep.
            for (from, depth) in [(0, 0), (text.find(':').map_or(0, |i| i + 1), 1)] {
                let [fast, slow] = both(text, from, depth);
                assert_eq!(fast, slow, "{from} {text}");
                stepped += usize::from(fast.is_some());
            }
        }
        assert!(stepped > 10_000, "{stepped}");
    }
}
