//! What the single-pass request readers build their types with: optional
//! fields, lists of records, and values kept both raw and parsed.

use serde_json::value::RawValue;

use super::JsonCursor;

impl<'a> JsonCursor<'a> {
    /// Reads `null` into `slot` as serde does (absent), or a value with
    /// `read`.
    pub(crate) fn set<T>(
        &mut self,
        slot: &mut Option<T>,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<()> {
        *slot = self.nullable(read)?;
        Some(())
    }

    /// A record read by `read` into a default value.
    pub(crate) fn record<T: Default>(
        &mut self,
        read: impl FnOnce(&mut Self, &mut T) -> Option<()>,
    ) -> Option<T> {
        let mut record = T::default();
        read(self, &mut record)?;
        Some(record)
    }

    /// An array of records, each read by `read` into a default value pushed
    /// first: the records (a few hundred bytes each) are built where they
    /// are kept, not moved there.
    pub(crate) fn list<T: Default>(
        &mut self,
        read: impl Fn(&mut Self, &mut T) -> Option<()>,
    ) -> Option<Vec<T>> {
        let mut list = Vec::new();
        self.array(|c| {
            list.push(T::default());
            read(c, list.last_mut()?)
        })?;
        Some(list)
    }

    /// A value's text, and its parsed form when `read` reads it; when it
    /// does not (a field of a type serde would refuse), the value is
    /// stepped over and left for serde to parse, and to report.
    pub(crate) fn raw_and_parsed<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<(&'a RawValue, Option<T>)> {
        let start = self.value_start()?;
        let before = self.clone();
        if let Some(parsed) = read(self) {
            return Some((self.raw_since(start), Some(parsed)));
        }
        *self = before;
        Some((self.raw()?, None))
    }
}
