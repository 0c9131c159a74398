//! The byte-level scans under the cursor: where a string closes, where a
//! number ends, and the run of plain string content between, eight bytes
//! at a time.

/// The index after the closing quote of a string whose content starts at
/// `i`, and whether an escape was met. Gives up on raw control characters,
/// which JSON forbids, on escapes unless `escapes`, and on `\u` escapes of
/// surrogates, which serde_json checks in some positions and not others.
pub(super) fn string_close(bytes: &[u8], mut i: usize, escapes: bool) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        i = skip_plain(bytes, i);
        match *bytes.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' if escapes => {
                escaped = true;
                i = escape_end(bytes, i + 1)?;
            }
            _ => return None,
        }
    }
}

/// The index after a number starting at `i`, as JSON's grammar has it.
pub(super) fn number_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |from: usize| {
        let count = bytes
            .get(from..)?
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (count > 0).then_some(from + count)
    };
    let int_end = digits(i)?;
    if bytes[i] == b'0' && int_end > i + 1 {
        return None;
    }
    i = int_end;
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// The index of the first quote, backslash or control character at or
/// after `i`, eight bytes at a time while eight are left: string content
/// is most of a document's bytes.
pub(super) fn skip_plain(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // High bit set in every byte of `word` below `n` (n <= 0x80). A borrow
    // can mark a byte above a marked one, never below it: the lowest mark
    // is exact, so the first byte to stop at is found in the word.
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    let equal = |word: u64, b: u8| below(word ^ (ONES * u64::from(b)), 1);
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let stops = below(word, 0x20) | equal(word, b'"') | equal(word, b'\\');
        if stops != 0 {
            return i + (stops.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// The index after an escape whose backslash is just before `i`; `None`
/// for an invalid escape or a lone surrogate code unit (which serde_json
/// refuses in some positions and not others). A pair of surrogates, as
/// clients that escape everything beyond ASCII write an emoji, is one
/// character.
fn escape_end(bytes: &[u8], i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 1),
        b'u' => match code_unit(bytes, i + 1)? {
            0xD800..=0xDBFF => {
                if bytes.get(i + 5..i + 7)? != b"\\u" {
                    return None;
                }
                let low = code_unit(bytes, i + 7)?;
                (0xDC00..0xE000).contains(&low).then_some(i + 11)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(i + 5),
        },
        _ => None,
    }
}

/// The four hex digits at `i`, as a UTF-16 code unit.
fn code_unit(bytes: &[u8], i: usize) -> Option<u16> {
    let hex = bytes.get(i..i + 4)?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}
