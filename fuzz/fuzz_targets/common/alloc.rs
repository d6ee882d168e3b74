//! A counting global allocator shared by the fuzz targets (included with `#[path]`): the peak
//! number of bytes held at once while a measurement runs, over every thread (the readers may
//! use rayon), as tests/robustness.rs counts them per thread. libFuzzer's own C++ allocations
//! do not go through it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

pub struct Counting;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn track(delta: isize) {
    if ACTIVE.load(Relaxed) {
        let now = CURRENT.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(now, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result with the peak bytes it held allocated at once (above what
/// was allocated when it started).
pub fn peak_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    CURRENT.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ACTIVE.store(true, Relaxed);
    let r = f();
    ACTIVE.store(false, Relaxed);
    (r, PEAK.load(Relaxed).max(0) as usize)
}

/// Asserts `peak ≤ k · len + constant`, naming the target's documented bound.
pub fn assert_bound(what: &str, peak: usize, len: usize, k: usize, constant: usize) {
    let bound = k.saturating_mul(len).saturating_add(constant);
    assert!(peak <= bound, "{what}: peak allocation {peak} bytes for {len} input bytes, over the bound {k}·len + {constant} = {bound}");
}
