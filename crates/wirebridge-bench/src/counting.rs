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
#![allow(unsafe_code)]

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
/// other threads.
fn count() {
    ALLOCATIONS.store(ALLOCATIONS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments, so
// `System`'s guarantees are the ones the caller gets; the counter does not
// touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
