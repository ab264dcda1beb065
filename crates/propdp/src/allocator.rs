//! The binaries' global allocator (`propdp` and the Python extension install
//! it; the library crates allocate through whatever their user installs):
//! mimalloc for blocks under [`LARGE`] bytes, the system allocator above.
//!
//! The long-horizon solver takes and frees small buffers every step, which
//! mimalloc serves far faster than glibc (a T = 10⁴, q = 1 Huber solve:
//! 5.16 → 4.41 s). Its largest blocks are zero-filled tables it touches only
//! in part — the sparse reverse pass's pair table, n·cap² floats (65 MB at
//! 1024 paths and q = 0.1, W ≈ 700), allocated anew whenever the window
//! widens — which mimalloc fills with zeros page by page, where glibc maps
//! fresh zero pages from the kernel and faults in only those touched: with
//! mimalloc alone the kernel's page clearing and the fill were 13% of a
//! q = 0.1 solve (docs/performance.md, "Session 42").

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of at least this many bytes go to the system allocator.
pub const LARGE: usize = 1 << 20;

/// mimalloc below [`LARGE`] bytes, the system allocator from it (see the
/// module documentation).
pub struct Allocator;

/// Whether a block of `size` bytes is the system allocator's.
fn large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every block is allocated and freed by the same allocator, chosen by
// its size, which `dealloc` and `realloc` receive as allocated; a `realloc`
// across LARGE moves the block between the two (allocate, copy, free).
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if large(layout.size()) {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if large(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the allocator its size chooses.
        unsafe {
            if large(layout.size()) {
                System.dealloc(ptr, layout);
            } else {
                MiMalloc.dealloc(ptr, layout);
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from the allocator its size chooses; a move between
        // the two copies the smaller of the sizes and frees the old block.
        unsafe {
            match (large(layout.size()), large(new_size)) {
                (true, true) => System.realloc(ptr, layout, new_size),
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                _ => {
                    let moved = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(moved);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks grown and shrunk across LARGE keep their bytes; zeroed blocks
    /// of both sizes are zero.
    #[test]
    fn blocks_keep_their_bytes_across_the_two_allocators() {
        let pattern = |i: usize| (i % 251) as u8;
        for size in [64, LARGE - 8, LARGE, 3 * LARGE] {
            let layout = Layout::from_size_align(size, 8).expect("a layout");
            // SAFETY: non-zero sizes; every block freed or resized with the
            // layout it has.
            unsafe {
                let zero = Allocator.alloc_zeroed(layout);
                assert!(!zero.is_null());
                assert!(std::slice::from_raw_parts(zero, size).iter().all(|&b| b == 0));
                Allocator.dealloc(zero, layout);
                let mut block = Allocator.alloc(layout);
                (0..size).for_each(|i| *block.add(i) = pattern(i));
                for new_size in [32, LARGE / 2, 2 * LARGE] {
                    let moved = Allocator.realloc(block, layout, new_size);
                    let kept = size.min(new_size);
                    assert!((0..kept).all(|i| *moved.add(i) == pattern(i)), "{size} -> {new_size}");
                    let moved_layout = Layout::from_size_align(new_size, 8).expect("a layout");
                    block = Allocator.realloc(moved, moved_layout, size);
                    (kept..size).for_each(|i| *block.add(i) = pattern(i));
                    assert!((0..size).all(|i| *block.add(i) == pattern(i)), "{new_size} -> {size}");
                }
                Allocator.dealloc(block, layout);
            }
        }
    }
}
