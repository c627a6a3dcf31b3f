//! The benchmark's global allocator: the system's, counting the bytes and
//! allocations in use, so the soak can tell heap growth from RSS creep
//! (allocator fragmentation, thread caches). Counters are striped per
//! thread, so threads never share a cache line on the hot path.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering::Relaxed};

pub struct Counting;

const STRIPES: usize = 16;

#[repr(align(64))]
struct Stripe {
    bytes: AtomicI64,
    allocations: AtomicI64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Stripe = Stripe {
    bytes: AtomicI64::new(0),
    allocations: AtomicI64::new(0),
};
static STRIPED: [Stripe; STRIPES] = [EMPTY; STRIPES];
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // A `Cell` of a plain integer: no destructor, so reading it never
    // allocates, as an allocator requires.
    static MY_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn stripe() -> &'static Stripe {
    let index = MY_STRIPE
        .try_with(|s| {
            if s.get() == usize::MAX {
                s.set(NEXT_STRIPE.fetch_add(1, Relaxed) % STRIPES);
            }
            s.get()
        })
        .unwrap_or(0);
    &STRIPED[index]
}

fn count(bytes: i64, allocations: i64) {
    let s = stripe();
    s.bytes.fetch_add(bytes, Relaxed);
    s.allocations.fetch_add(allocations, Relaxed);
}

// SAFETY: every call is passed on to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64, 1);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as i64, 1);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64), -1);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64, 0);
        }
        p
    }
}

/// Heap in use now: bytes allocated minus bytes freed, and live allocations.
pub fn in_use() -> (u64, u64) {
    let (mut bytes, mut allocations) = (0i64, 0i64);
    for s in &STRIPED {
        bytes += s.bytes.load(Relaxed);
        allocations += s.allocations.load(Relaxed);
    }
    (bytes.max(0) as u64, allocations.max(0) as u64)
}
