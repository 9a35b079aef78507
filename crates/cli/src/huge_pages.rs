//! The `cclab` binary's memory allocator: glibc's, asking the kernel to back a simulation's
//! memory with transparent huge pages.
//!
//! Why: a simulation of thousands of flows reads each flow's state and scoreboard ring once
//! per packet, in an order the link decides, so with 4 kB pages nearly every such access
//! also misses the TLB and waits for a page-table walk (`perf record` of `cclab bench`'s
//! case (c) put 15-20% of its samples on the prefetch instructions for exactly that). One
//! 2 MB page covers 512 of them. Debian's kernels, like most, run transparent huge pages in
//! `madvise` mode: a process gets them only in ranges it marks with `madvise(MADV_HUGEPAGE)`
//! before touching them (Documentation/admin-guide/mm/transhuge.rst in Linux). Once
//! [`enable`]d, this marks
//! - every block of at least [`LARGE`] bytes (the flow table, the queues), when it is
//!   allocated and again when `realloc` moves it;
//! - each stretch the heap grows by, for the many small blocks (each flow's scoreboard
//!   ring): glibc then grows its heap ([`HEAP_STEP`]) in steps large enough that most of
//!   each is still untouched when it is marked.
//!
//! That is what glibc's own `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` does (malloc/arena.c,
//! `madvise_thp`); the program cannot set that tunable for itself once started. Measured:
//! case (c) (10,000 flows) x0.92 in whole-process CPU, memory unchanged. Results do not
//! change: the hint is about where memory lives, not what it holds, and where the kernel has
//! no huge pages `madvise` fails and the memory stays as it was.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The smallest block worth marking on its own: it always holds a whole, aligned huge page.
pub const LARGE: usize = 4 << 20;

/// How far glibc's heap grows past a request that does not fit (`M_TOP_PAD`; glibc's
/// default is 128 kB).
pub const HEAP_STEP: usize = 32 << 20;

/// A transparent huge page on x86-64, and on arm64 with 4 kB base pages.
const HUGE_PAGE: usize = 2 << 20;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Where the heap's marked part ends (0 before the first look at the heap).
static HEAP_MARKED_TO: AtomicUsize = AtomicUsize::new(0);

/// Starts marking memory for huge pages, for a process that simulates. The web server does
/// not call it: it keeps up to 32 runs for hours, and memory counted in 2 MB pages would
/// only round its size up.
pub fn enable() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator; a value it refuses
    // leaves the default in place.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, HEAP_STEP as libc::c_int);
    }
    ENABLED.store(true, Relaxed);
}

/// glibc's allocator, marking memory for huge pages once [`enable`]d.
pub struct HugePageHints;

// SAFETY: every method hands its request to `System` unchanged and returns its answer; the
// marking only reads the address range `System` returned.
unsafe impl GlobalAlloc for HugePageHints {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as the caller gave it.
        let block = unsafe { System.alloc(layout) };
        mark(block, layout.size());
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as the caller gave it.
        let block = unsafe { System.alloc_zeroed(layout) };
        mark(block, layout.size());
        block
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as the caller gave it.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        mark(moved, new_size);
        moved
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: forwarded as the caller gave it.
        unsafe { System.dealloc(block, layout) }
    }
}

/// After an allocation: marks the block if it is large, and whatever the heap grew by.
fn mark(block: *mut u8, size: usize) {
    if !ENABLED.load(Relaxed) || block.is_null() {
        return;
    }
    if size >= LARGE {
        advise(whole_huge_pages(block as usize, size));
    }
    mark_heap_growth();
}

/// Marks the heap from where marking last stopped to its current end (the program break;
/// only the main thread's arena grows there, other threads' arenas are large blocks).
fn mark_heap_growth() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: sbrk(0) moves nothing; it returns the current program break.
        let top = unsafe { libc::sbrk(0) } as usize;
        let marked = HEAP_MARKED_TO.load(Relaxed);
        if marked == 0 || top < marked {
            // First look, or glibc gave memory back: mark from here on.
            HEAP_MARKED_TO.store(top, Relaxed);
        } else {
            let (start, end) = whole_huge_pages(marked, top - marked);
            if end > start {
                advise((start, end));
                HEAP_MARKED_TO.store(end, Relaxed);
            }
        }
    }
}

/// Asks for huge pages in `[start, end)`; a refusal leaves the range as it was.
fn advise((start, end): (usize, usize)) {
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside memory the allocator has handed out or the heap it
    // grew, and MADV_HUGEPAGE changes only how its pages are backed, never their contents.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// The largest range of whole, aligned huge pages inside `[start, start + size)`.
fn whole_huge_pages(start: usize, size: usize) -> (usize, usize) {
    let first = start.next_multiple_of(HUGE_PAGE);
    let last = (start + size) / HUGE_PAGE * HUGE_PAGE;
    (first, last.max(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marked_range_is_whole_huge_pages_inside_the_block() {
        let mb = 1 << 20;
        assert_eq!(whole_huge_pages(0, LARGE), (0, LARGE));
        assert_eq!(whole_huge_pages(mb, LARGE), (2 * mb, 4 * mb));
        assert_eq!(whole_huge_pages(4096, LARGE), (2 * mb, 4 * mb));
        assert_eq!(whole_huge_pages(3 * mb, 2 * mb), (4 * mb, 4 * mb), "none inside");
    }

    #[test]
    fn blocks_of_every_size_keep_their_contents_through_realloc() {
        enable();
        let a = HugePageHints;
        for size in [64, 200_000, LARGE - 1, LARGE, 3 * LARGE] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            // SAFETY: a layout of non-zero size; the block is freed with the layout it
            // has at that point.
            unsafe {
                let block = a.alloc_zeroed(layout);
                assert!(!block.is_null());
                block.add(size - 1).write(7);
                let moved = a.realloc(block, layout, 2 * size);
                assert_eq!(moved.add(size - 1).read(), 7);
                assert_eq!(moved.read(), 0);
                a.dealloc(moved, Layout::from_size_align(2 * size, 64).unwrap());
            }
        }
    }

    /// The kernel's answer, read back from /proc/self/smaps: a marked block gets huge
    /// pages unless THP is off (`never`) on this machine.
    #[test]
    fn a_large_block_gets_huge_pages_where_the_kernel_has_them() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !thp.as_deref().is_ok_and(|t| t.contains("[madvise]") || t.contains("[always]")) {
            cclab_units::errln!("skipped: transparent huge pages are off or absent here ({thp:?})");
            return;
        }
        enable();
        let size = 4 * LARGE;
        let layout = Layout::from_size_align(size, 4096).unwrap();
        // SAFETY: a layout of non-zero size, freed with the same layout.
        unsafe {
            let block = HugePageHints.alloc(layout);
            for page in (0..size).step_by(4096) {
                block.add(page).write(1);
            }
            let huge_kb = anon_huge_kb_around(block as usize + size / 2);
            HugePageHints.dealloc(block, layout);
            assert!(huge_kb >= 2048, "AnonHugePages {huge_kb} kB in the block's mapping");
        }
    }

    /// AnonHugePages of the mapping that holds `address`, from /proc/self/smaps (marking
    /// splits a block's mapping: its middle is the marked part).
    fn anon_huge_kb_around(address: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                if inside {
                    return kb.trim().trim_end_matches("kB").trim().parse().unwrap();
                }
            } else if let Some(range) = mapping_range(line) {
                inside = range.contains(&address);
            }
        }
        panic!("no mapping holds {address:#x}");
    }

    /// The address range of an smaps line that opens a mapping ("lo-hi perms ...").
    fn mapping_range(line: &str) -> Option<std::ops::Range<usize>> {
        let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
        Some(usize::from_str_radix(lo, 16).ok()?..usize::from_str_radix(hi, 16).ok()?)
    }
}
