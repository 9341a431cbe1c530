//! The binary's allocator: the system's (glibc's) for a command that
//! touches one discussion, mimalloc's from the moment a command sets out
//! to read much of the ledger. Both must stay. A record is a handful of
//! small strings, and with glibc's allocator malloc and free were a fifth
//! of the whole-ledger work (`events` 1.29 s against 0.88–1.11 s at a
//! million records); but mimalloc's start (a 1 GiB arena, a 2 MiB huge
//! page zeroed at the first touch, 32 MiB given back at exit) was a fifth
//! of a short command's (docs/performance.md, "A command's fixed cost").
//!
//! Each block is freed (or grown) by the allocator that made it, which
//! `mi_is_in_heap_region` tells: a block of mimalloc's is in one of its
//! arenas or segments, and nothing of the system's ever is.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

static BULK: AtomicBool = AtomicBool::new(false);

/// From now on, new blocks are mimalloc's: the command reads much of the
/// ledger (a whole-ledger command, a long stream, a rebuild, a server).
pub(crate) fn for_bulk_work() {
    BULK.store(true, Ordering::Relaxed);
}

unsafe extern "C" {
    // mimalloc's own (linked by the `mimalloc` crate): whether `p` is a
    // block of its heap. Safe on any pointer, before any allocation too.
    fn mi_is_in_heap_region(p: *const u8) -> bool;
}

/// glibc's allocator until `for_bulk_work`, mimalloc's after.
pub struct Allocator;

// SAFETY: every call goes to one of two sound allocators, with the
// caller's guarantees passed on, and a block is always freed or grown by
// the one that made it.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller guarantees (a layout of non-zero size).
        unsafe {
            if BULK.load(Ordering::Relaxed) {
                mimalloc::MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller guarantees (a layout of non-zero size).
        unsafe {
            if BULK.load(Ordering::Relaxed) {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a block of this allocator with this layout (the
        // caller's guarantee), so of the one that owns it.
        unsafe {
            if mi_is_in_heap_region(ptr) {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`, and `new_size` as the caller guarantees.
        unsafe {
            if mi_is_in_heap_region(ptr) {
                mimalloc::MiMalloc.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of either allocator, grown and freed through this one, stays
    /// with the allocator that made it (a wrong turn aborts the process).
    #[test]
    fn each_block_is_grown_and_freed_by_the_allocator_that_made_it() {
        let layout = Layout::from_size_align(48, 8).unwrap();
        // SAFETY: non-zero layouts; each block is used within its size and
        // freed once, with the layout it has.
        unsafe {
            let systems = System.alloc(layout);
            let mimallocs = mimalloc::MiMalloc.alloc(layout);
            assert!(!systems.is_null() && !mimallocs.is_null());
            assert!(!mi_is_in_heap_region(systems));
            assert!(mi_is_in_heap_region(mimallocs));
            systems.write_bytes(7, 48);
            mimallocs.write_bytes(9, 48);
            let systems = Allocator.realloc(systems, layout, 1 << 20);
            let mimallocs = Allocator.realloc(mimallocs, layout, 1 << 20);
            assert!(!mi_is_in_heap_region(systems), "still the system's");
            assert!(mi_is_in_heap_region(mimallocs), "still mimalloc's");
            assert_eq!((*systems, *systems.add(47)), (7, 7));
            assert_eq!((*mimallocs, *mimallocs.add(47)), (9, 9));
            let grown = Layout::from_size_align(1 << 20, 8).unwrap();
            Allocator.dealloc(systems, grown);
            Allocator.dealloc(mimallocs, grown);
        }
        for_bulk_work();
        // SAFETY: as above.
        unsafe {
            let block = Allocator.alloc(layout);
            assert!(mi_is_in_heap_region(block), "bulk work is mimalloc's");
            Allocator.dealloc(block, layout);
        }
    }
}
