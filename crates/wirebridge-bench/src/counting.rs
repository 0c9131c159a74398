//! A global allocator that counts allocations, for the allocations-per-item
//! column of `wirebridge-bench`.
//!
//! Implementing `GlobalAlloc` is the one use of `unsafe` in this crate: the
//! trait is unsafe to implement, and counting needs it. Every call is
//! forwarded unchanged to the system allocator; the only addition is a
//! relaxed atomic increment per allocation. The counter is on while the
//! cases are timed too: measured against a build without it, interleaved
//! runs on a 2-core VM, the difference was below the run-to-run noise on
//! every case (the 3 KB request, with some 60 allocations, took 8.6-8.7 µs
//! both ways).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Allocations (including reallocations) made by this process so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Counts one allocation: a relaxed load and store rather than a locked
/// read-modify-write, so the count is exact for the one thread
/// `wirebridge-bench` measures on, and may miss increments that race on
/// other threads. It neither allocates (the allocator would recurse) nor
/// panics (a global allocator must not unwind), hence the wrapping add.
fn count() {
    ALLOCATIONS.store(
        ALLOCATIONS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

struct Counting;

// `GlobalAlloc` is an unsafe trait, so implementing it needs `unsafe`; the
// allowance covers this impl and nothing else in the crate.
#[allow(unsafe_code)]
// SAFETY: `GlobalAlloc` asks that the memory returned fits the layout, stays
// valid until freed, and that no method unwinds. Every method passes the
// caller's arguments unchanged to `System`, which upholds the first two, and
// hands back exactly what `System` returned, so every block this allocator
// gives out or takes back is a `System` block. The one addition, `count`,
// touches neither the memory nor the arguments, never allocates and never
// panics.
unsafe impl GlobalAlloc for Counting {
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

#[global_allocator]
static GLOBAL: Counting = Counting;
