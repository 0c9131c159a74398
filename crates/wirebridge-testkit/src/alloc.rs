//! Counting heap allocations, for the tests that assert them and the
//! benchmarks that report them (counts are deterministic, unlike timings).
//!
//! Install [`CountingAllocator`] as the global allocator of a test binary
//! or benchmark, then read [`allocations`] before and after the work:
//!
//! ```
//! use wirebridge_testkit::{allocations, CountingAllocator};
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! fn main() {
//!     let before = allocations();
//!     let v: Vec<u64> = Vec::with_capacity(3);
//!     assert_eq!(allocations() - before, 1);
//!     # drop(v);
//! }
//! ```
//!
//! Counts are per thread: tests run on parallel threads, and each counts
//! only its own work.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Allocations (reallocations included) this thread has made so far, when
/// [`CountingAllocator`] is the global allocator; always 0 otherwise.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Counts one allocation of this thread. Neither allocates (the allocator
/// would recurse) nor panics (a global allocator must not unwind): a
/// thread-local `Cell` with a constant initializer, skipped while the
/// thread's locals are being torn down, and a wrapping add.
fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get().wrapping_add(1)));
}

/// The system allocator, counting the allocations of each thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

// `GlobalAlloc` is an unsafe trait, so implementing it needs `unsafe`; the
// allowance covers this impl and nothing else in the crate.
//
// SAFETY: `GlobalAlloc` asks that the memory returned fits the layout, stays
// valid until freed, and that no method unwinds. Every method passes the
// caller's arguments unchanged to `System`, which upholds the first two, and
// hands back exactly what `System` returned, so every block this allocator
// gives out or takes back is a `System` block. The one addition, `count`,
// touches neither the memory nor the arguments, never allocates and never
// panics.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: our caller guarantees `layout` has a non-zero size, which
        // is all `System.alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: our caller guarantees `layout` has a non-zero size, which
        // is all `System.alloc_zeroed` requires.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: our caller guarantees `ptr` is a block this allocator
        // handed out with `layout` and has not freed, so one `System`
        // allocated with `layout` (every block here comes from `System`),
        // and that `new_size` is non-zero and, rounded up to `layout`'s
        // alignment, at most `isize::MAX`: the contract of `System.realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: our caller guarantees `ptr` is a block this allocator
        // handed out with `layout` and has not freed; every block here is
        // one `System` allocated with that layout, so `System` may free it.
        unsafe { System.dealloc(ptr, layout) }
    }
}
