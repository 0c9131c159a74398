//! One bound on the bytes every WebSocket connection of a layer holds
//! together: their caches and the requests waiting on them. The bounds of
//! one connection do not bound how many connections there are (a made-up
//! credential each), so the sum has a bound of its own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes shared by every holder, up to a limit: each takes what it keeps
/// and gives it back when it lets go.
#[derive(Debug)]
pub(crate) struct ByteBudget {
    limit: usize,
    held: AtomicUsize,
}

/// Bytes taken from a [`ByteBudget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<ByteBudget>,
    bytes: usize,
}

impl ByteBudget {
    /// A budget of `limit` bytes, none taken.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            held: AtomicUsize::new(0),
        }
    }

    /// The bound, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes held now, by every holder.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// `bytes` more, unless they would take the holders past the limit.
    pub(crate) fn try_take(self: &Arc<Self>, bytes: usize) -> Option<Held> {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|&sum| sum <= self.limit)
            })
            .ok()?;
        Some(Held {
            budget: Arc::clone(self),
            bytes,
        })
    }

    /// A holding of nothing, to be set to what its holder keeps.
    pub(crate) fn none(self: &Arc<Self>) -> Held {
        Held {
            budget: Arc::clone(self),
            bytes: 0,
        }
    }
}

impl Held {
    /// Holds `bytes` from now on, whether or not they fit: for memory
    /// already taken (a cache after a save), which the count must show so
    /// that the next taker is refused. Never more than the holder keeps.
    pub(crate) fn set(&mut self, bytes: usize) {
        if bytes >= self.bytes {
            self.budget
                .held
                .fetch_add(bytes - self.bytes, Ordering::AcqRel);
        } else {
            self.budget
                .held
                .fetch_sub(self.bytes - bytes, Ordering::AcqRel);
        }
        self.bytes = bytes;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_taken_up_to_the_limit_and_given_back_on_drop() {
        let budget = Arc::new(ByteBudget::new(100));
        let first = budget.try_take(60).unwrap();
        assert_eq!(budget.held(), 60);
        assert!(budget.try_take(41).is_none(), "60 + 41 is past 100");
        assert_eq!(budget.held(), 60, "a refusal takes nothing");
        let second = budget.try_take(40).unwrap();
        assert_eq!(budget.held(), 100);
        assert!(budget.try_take(1).is_none());
        drop(first);
        assert_eq!(budget.held(), 40);
        assert!(budget.try_take(60).is_some());
        drop(second);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_holding_set_to_what_is_kept_counts_it_even_past_the_limit() {
        let budget = Arc::new(ByteBudget::new(100));
        let mut cache = budget.none();
        cache.set(80);
        assert_eq!(budget.held(), 80);
        cache.set(120);
        assert_eq!(budget.held(), 120);
        assert!(budget.try_take(0).is_none(), "over the limit, nothing more");
        cache.set(30);
        assert_eq!(budget.held(), 30);
        assert!(budget.try_take(70).is_some());
        drop(cache);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_sum_past_usize_is_refused_not_wrapped() {
        let budget = Arc::new(ByteBudget::new(usize::MAX));
        let _most = budget.try_take(usize::MAX - 1).unwrap();
        assert!(budget.try_take(2).is_none());
    }
}
