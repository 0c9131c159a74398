//! Deterministic pseudo-random chunking of byte streams, so that tests can
//! feed a decoder the way TCP would: sometimes one byte at a time, sometimes a
//! few bytes, sometimes large blocks that hold several frames at once.

/// xorshift64* generator (Vigna), seeded through splitmix64 so that every
/// seed, including 0, gives a non-zero state.
struct XorShift64Star(u64);

impl XorShift64Star {
    fn new(seed: u64) -> Self {
        // One round of splitmix64.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift64Star(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish value in `lo..=hi` (modulo bias is irrelevant here).
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % ((hi - lo) as u64 + 1)) as usize
    }
}

/// Cut positions for splitting a buffer of `len` bytes: strictly increasing,
/// each in `1..len`, deterministic for a given `(len, seed)`.
///
/// Piece sizes are drawn from three classes: single bytes (about 35 %), small
/// pieces of 2–16 bytes (about 35 %) and large pieces of 17–4096 bytes.
pub fn split_points(len: usize, seed: u64) -> Vec<usize> {
    let mut rng = XorShift64Star::new(seed ^ (len as u64).rotate_left(32));
    let mut points = Vec::new();
    let mut pos = 0usize;
    loop {
        let piece = match rng.next() % 100 {
            0..=34 => 1,
            35..=69 => rng.range(2, 16),
            _ => rng.range(17, 4096),
        };
        pos += piece;
        if pos >= len {
            break;
        }
        points.push(pos);
    }
    points
}

/// Split `bytes` at [`split_points`]`(bytes.len(), seed)`. The pieces are
/// non-empty and concatenate to `bytes`; an empty input gives no pieces.
pub fn split_random(bytes: &[u8], seed: u64) -> Vec<Vec<u8>> {
    if bytes.is_empty() {
        return Vec::new();
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for p in split_points(bytes.len(), seed) {
        pieces.push(bytes[start..p].to_vec());
        start = p;
    }
    pieces.push(bytes[start..].to_vec());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_concatenate_and_are_deterministic() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        for seed in 0..50 {
            let pieces = split_random(&data, seed);
            assert!(pieces.iter().all(|p| !p.is_empty()));
            assert_eq!(pieces.concat(), data);
            assert_eq!(pieces, split_random(&data, seed));
        }
        assert_ne!(split_points(20_000, 1), split_points(20_000, 2));
    }

    #[test]
    fn mixes_piece_sizes() {
        let points = split_points(100_000, 42);
        let mut prev = 0;
        let (mut ones, mut small, mut large) = (0, 0, 0);
        for p in points {
            assert!(p > prev);
            match p - prev {
                1 => ones += 1,
                2..=16 => small += 1,
                _ => large += 1,
            }
            prev = p;
        }
        assert!(ones > 5 && small > 5 && large > 5, "{ones} {small} {large}");
    }

    #[test]
    fn tiny_inputs() {
        assert!(split_random(b"", 3).is_empty());
        assert_eq!(split_random(b"x", 3), vec![b"x".to_vec()]);
        for seed in 0..20 {
            assert_eq!(split_random(b"ab", seed).concat(), b"ab");
        }
    }
}
