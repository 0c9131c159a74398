//! [`Items`]: a JSON array whose first element is stored inline.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The elements of a JSON array, the first one stored inline.
///
/// Stream chunks carry arrays that almost always hold one element (a
/// chunk's `choices`, a delta's `tool_calls`); reading them into a `Vec`
/// would allocate on every chunk. Here only the second and later elements
/// go to the heap.
#[derive(Debug, Clone, PartialEq)]
pub struct Items<T> {
    first: Option<T>,
    rest: Vec<T>,
}

impl<T> Default for Items<T> {
    fn default() -> Self {
        Self {
            first: None,
            rest: Vec::new(),
        }
    }
}

impl<T> Items<T> {
    /// How many elements there are.
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    /// Whether the array was empty.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The element at `index`.
    pub fn get(&self, index: usize) -> Option<&T> {
        match index {
            0 => self.first.as_ref(),
            _ => self.rest.get(index - 1),
        }
    }

    /// Adds an element at the end, as reading the array does.
    pub(crate) fn push(&mut self, item: T) {
        match self.first {
            None => self.first = Some(item),
            Some(_) => self.rest.push(item),
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> std::iter::Chain<std::option::Iter<'_, T>, std::slice::Iter<'_, T>> {
        self.first.iter().chain(self.rest.iter())
    }
}

impl<T> From<Vec<T>> for Items<T> {
    fn from(mut all: Vec<T>) -> Self {
        if all.is_empty() {
            return Self::default();
        }
        let first = all.remove(0);
        Self {
            first: Some(first),
            rest: all,
        }
    }
}

impl<T> Index<usize> for Items<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(item) => item,
            None => panic!("index {index} out of range for {} items", self.len()),
        }
    }
}

impl<'s, T> IntoIterator for &'s Items<T> {
    type Item = &'s T;
    type IntoIter = std::iter::Chain<std::option::Iter<'s, T>, std::slice::Iter<'s, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> IntoIterator for Items<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Items<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ItemsVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for ItemsVisitor<T> {
            type Value = Items<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<T>, A::Error> {
                let first = seq.next_element()?;
                let mut rest = Vec::new();
                if first.is_some() {
                    while let Some(item) = seq.next_element()? {
                        rest.push(item);
                    }
                }
                Ok(Items { first, rest })
            }
        }

        d.deserialize_seq(ItemsVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_arrays_of_any_length() {
        let none: Items<u32> = serde_json::from_str("[]").unwrap();
        assert!(none.is_empty());
        assert_eq!(none.len(), 0);
        let one: Items<u32> = serde_json::from_str("[7]").unwrap();
        assert_eq!((one.len(), one[0]), (1, 7));
        let three: Items<u32> = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(three.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(three.get(2), Some(&3));
        assert_eq!(three.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(Items::from(vec![4, 5]).iter().count(), 2);
        let err = serde_json::from_str::<Items<u32>>("{}").unwrap_err();
        assert!(err.to_string().contains("expected a sequence"), "{err}");
    }
}
