//! Byte search for line terminators.
//!
//! JSON payloads make SSE lines long, so finding the end of a line is the
//! hot loop of decoding. Testing eight bytes per step with word arithmetic
//! keeps it fast without a dependency or `unsafe`.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
const LF: u64 = LO * b'\n' as u64;
const CR: u64 = LO * b'\r' as u64;

/// Marks the zero bytes of `v` in their high bit.
///
/// Borrows can produce false marks, but only above a genuine zero byte, so
/// the lowest mark is always exact; that is all the caller looks at.
#[inline]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// Index of the first `\n` or `\r` in `hay`.
#[inline]
pub(crate) fn find_line_end(hay: &[u8]) -> Option<usize> {
    let mut words = hay.chunks_exact(8);
    let mut offset = 0;
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let marks = zero_bytes(w ^ LF) | zero_bytes(w ^ CR);
        if marks != 0 {
            return Some(offset + (marks.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::find_line_end;

    fn naive(hay: &[u8]) -> Option<usize> {
        hay.iter().position(|&b| b == b'\n' || b == b'\r')
    }

    #[test]
    fn agrees_with_naive_search() {
        // Bytes adjacent to CR and LF are the ones borrow tricks get wrong.
        let alphabet = [
            0u8, 1, 9, 10, 11, 12, 13, 14, 0x7f, 0x80, 0x8a, 0x8d, 0xff, b'a',
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let hay: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(find_line_end(&hay), naive(&hay), "{hay:?}");
        }
    }

    #[test]
    fn finds_each_position() {
        for len in 0..40 {
            for at in 0..len {
                for t in [b'\n', b'\r'] {
                    let mut hay = vec![b'x'; len];
                    hay[at] = t;
                    assert_eq!(find_line_end(&hay), Some(at));
                }
            }
            assert_eq!(find_line_end(&vec![b'x'; len]), None);
        }
    }
}
