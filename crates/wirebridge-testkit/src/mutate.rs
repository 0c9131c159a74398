//! Deterministic pseudo-random mutation of real inputs, for tests that feed
//! damaged data to parsers and translators.

/// A small xorshift generator: deterministic, seeded, good enough for
/// picking mutations.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// A copy of `input` with one to six damages: a byte replaced by JSON
/// punctuation or a random byte, a byte deleted, or a run duplicated.
pub fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(6) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        match rng.below(4) {
            0 => out[at] = b"{}[]\",:\\\n0an"[rng.below(12)],
            1 => {
                out.remove(at);
            }
            2 => {
                let end = (at + rng.below(64)).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            _ => out[at] = rng.next_u64() as u8,
        }
    }
    out
}

/// A copy of `input` with `edits` small edits, each replacing, inserting
/// or deleting one byte, inserted and replacing bytes taken from
/// `alphabet`: damage slight enough that most copies keep their shape, for
/// tests that compare two readers of the same input.
pub fn edit(input: &[u8], alphabet: &[u8], edits: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..edits {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        let b = alphabet[rng.below(alphabet.len())];
        match rng.below(3) {
            0 => out[at] = b,
            1 => out.insert(at, b),
            _ => drop(out.remove(at)),
        }
    }
    out
}

/// Compares a fast reader with the reader it stands in for on slightly
/// edited copies of `documents` (one or two [`edit`]s each, the documents
/// taken in turn, `rounds` copies in all): every copy the fast reader
/// reads, the other must read alike. Returns how many copies were
/// compared, for the caller to check that the edits kept enough of them
/// readable to mean something.
pub fn compare_edited<T: PartialEq + std::fmt::Debug>(
    documents: &[&str],
    alphabet: &[u8],
    seed: u64,
    rounds: usize,
    fast: impl Fn(&str) -> Option<T>,
    slow: impl Fn(&str) -> Option<T>,
) -> usize {
    let mut rng = Rng(seed);
    let mut compared = 0;
    for round in 0..rounds {
        let base = documents[round % documents.len()];
        let edits = 1 + rng.below(2);
        let bytes = edit(base.as_bytes(), alphabet, edits, &mut rng);
        let Ok(data) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Some(read) = fast(data) {
            assert_eq!(Some(read), slow(data), "{data}");
            compared += 1;
        }
    }
    compared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_change_the_input() {
        let input = br#"{"model":"m","input":"hello"}"#;
        let a: Vec<_> = (0..20)
            .map({
                let mut r = Rng(9);
                move |_| mutate(input, &mut r)
            })
            .collect();
        let b: Vec<_> = (0..20)
            .map({
                let mut r = Rng(9);
                move |_| mutate(input, &mut r)
            })
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().filter(|m| m.as_slice() != input).count() >= 18);
    }
}
