//! A counting allocator: per-thread current and peak bytes while a measurement is active
//! (tests run on several threads at once, so the counters are thread-local). A test binary
//! that measures installs it: `#[global_allocator] static ALLOC: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    let _ = ACTIVE.try_with(|a| {
        if a.get() {
            let _ = CURRENT.try_with(|c| {
                let now = c.get() + delta;
                c.set(now);
                let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
            });
        }
    });
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

/// Run `f` and return its result with the peak number of bytes it held allocated at once
/// (on this thread, above what was allocated before it started). Counts only where
/// [`Counting`] is the global allocator.
pub fn peak_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    CURRENT.with(|c| c.set(0));
    PEAK.with(|p| p.set(0));
    ACTIVE.with(|a| a.set(true));
    let r = f();
    ACTIVE.with(|a| a.set(false));
    (r, PEAK.with(|p| p.get()).max(0) as usize)
}
