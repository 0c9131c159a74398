//! Paths of request fields (`messages[3].content[0]`) for errors and
//! losses, and ids from positions (`msg_3_0`).
//!
//! Every message and block has a path, but only an error or a loss writes
//! one out: a [`Path`] is a chain of segments on the stack, formatted when
//! named. Built as strings for every message and block, the Claude
//! Code-like request's paths took 32 allocations and about 10 K
//! instructions of its translation (callgrind, `hub/request`).

use std::fmt;

use wirebridge_wire::decimal::push_decimal_str;

/// Where a field of the request lies: its parent's path and one segment
/// more. `Copy`, and written out (by `Display`) only when named.
#[derive(Clone, Copy)]
pub(super) struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    segment: Segment,
}

#[derive(Clone, Copy)]
enum Segment {
    /// A top-level field: `messages`.
    Root(&'static str),
    /// `.field`.
    Member(&'static str),
    /// `[index]`.
    Index(usize),
}

impl Path<'static> {
    /// A top-level field.
    pub(super) const fn root(field: &'static str) -> Self {
        Path {
            parent: None,
            segment: Segment::Root(field),
        }
    }
}

impl<'p> Path<'p> {
    /// `{self}.{field}`.
    pub(super) fn member(&'p self, field: &'static str) -> Path<'p> {
        Path {
            parent: Some(self),
            segment: Segment::Member(field),
        }
    }

    /// `{self}[{index}]`.
    pub(super) fn index(&'p self, index: usize) -> Path<'p> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.segment {
            Segment::Root(field) => f.write_str(field),
            Segment::Member(field) => write!(f, ".{field}"),
            Segment::Index(index) => write!(f, "[{index}]"),
        }
    }
}

impl fmt::Debug for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
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
        let messages = Path::root("messages");
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(messages.index(n).to_string(), format!("messages[{n}]"));
            let message = messages.index(2);
            let content = message.member("content");
            assert_eq!(
                content.index(n).to_string(),
                format!("messages[2].content[{n}]")
            );
            assert_eq!(position_id("msg_", n, 7), format!("msg_{n}_7"));
            assert_eq!(position_id("rs_", 3, n), format!("rs_3_{n}"));
        }
        let tools = Path::root("tools");
        let tool = tools.index(1);
        assert_eq!(tool.member("name").to_string(), "tools[1].name");
        assert_eq!(format!("{:?}", tool.member("name")), "tools[1].name");
    }
}
