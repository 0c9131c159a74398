//! Paths of request fields (`messages[3].content[0]`) for errors and
//! losses, and ids from positions (`msg_3_0`).
//!
//! One path is built for every message and block whether anything goes
//! wrong or not. With `format!` they cost about 25 K instructions of the
//! Claude Code-like request's 256 K (callgrind, 200 translations); written
//! here by hand, about 10 K.

use wirebridge_wire::decimal::push_decimal_str;

/// `{parent}{field}[{index}]`: `field` is empty or starts with a dot.
pub(super) fn indexed(parent: &str, field: &str, index: usize) -> String {
    let mut path = String::with_capacity(parent.len() + field.len() + 22);
    path.push_str(parent);
    path.push_str(field);
    path.push('[');
    push_decimal_str(&mut path, index as u64);
    path.push(']');
    path
}

/// `{parent}.{field}`.
pub(super) fn member(parent: &str, field: &str) -> String {
    let mut path = String::with_capacity(parent.len() + 1 + field.len());
    path.push_str(parent);
    path.push('.');
    path.push_str(field);
    path
}

/// `{head}{first}_{second}`, as in `msg_3_0`.
pub(super) fn position_id(head: &str, first: usize, second: usize) -> String {
    let mut id = String::with_capacity(head.len() + 42);
    id.push_str(head);
    push_decimal_str(&mut id, first as u64);
    id.push('_');
    push_decimal_str(&mut id, second as u64);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_ids_read_as_their_format() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(indexed("messages", "", n), format!("messages[{n}]"));
            assert_eq!(
                indexed("messages[2]", ".content", n),
                format!("messages[2].content[{n}]")
            );
            assert_eq!(position_id("msg_", n, 7), format!("msg_{n}_7"));
            assert_eq!(position_id("rs_", 3, n), format!("rs_3_{n}"));
        }
        assert_eq!(member("tools[1]", "name"), "tools[1].name");
        assert_eq!(member("", "x"), ".x");
    }
}
