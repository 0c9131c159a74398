//! Where a value sits in the request, as the JSON path losses and errors
//! name it: written out only when one does.

use std::fmt;

/// A path below `input`.
#[derive(Debug, Clone, Copy)]
pub(super) enum At<'p> {
    /// `input[N]`.
    Item(usize),
    /// A field of what is at the path.
    Field(&'p At<'p>, &'static str),
    /// An element of the array at the path.
    Index(&'p At<'p>, usize),
}

impl<'p> At<'p> {
    /// The field `name` below this path.
    pub(super) fn field(&'p self, name: &'static str) -> At<'p> {
        At::Field(self, name)
    }

    /// The element `n` of the array at this path.
    pub(super) fn index(&'p self, n: usize) -> At<'p> {
        At::Index(self, n)
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Item(n) => write!(f, "input[{n}]"),
            At::Field(at, name) => write!(f, "{at}.{name}"),
            At::Index(at, n) => write!(f, "{at}[{n}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_json_paths() {
        let item = At::Item(3);
        let content = item.field("content");
        assert_eq!(
            content.index(1).field("image_url").to_string(),
            "input[3].content[1].image_url"
        );
    }
}
