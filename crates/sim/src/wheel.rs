//! A calendar queue for per-flow timers (RTO, delayed ACK): O(1) insertion into ~1 ms
//! slots, and a sorted list for the slot being served, so 10,000 flows' timers do not
//! make every event pay for a 20,000-entry binary heap. Order is exactly that of a heap
//! on (time, seq): entries of one slot are released into `ready` together, and
//! everything in `ready` and `late` precedes everything still in later slots.
//!
//! `ready` is sorted once when a slot is released, and its next entry is then a plain
//! `Vec::pop`. It was a binary heap, and with 10,000 flows (a few hundred timers per
//! slot) its pops were 4.6% of case (c) of `cclab bench`: each sifts down the whole
//! heap on unpredictable branches. Timers pushed for a slot already released (about one
//! push in fifteen there: deadlines that have passed or fall in the slot being served)
//! go to a small heap beside it, `late`; inserting them into the sorted list in place
//! moved hundreds of entries each and cost more than the heap had.
//!
//! Slots hold their entries in fixed-size blocks from one pool, chained per slot, and a
//! released slot's blocks go back to the pool. A `Vec` per slot, regrown as the slot
//! fills and shrunk once served, fragmented the heap with 100,000 flows: the slots'
//! buffers of every size, freed and carved up by small allocations between, left
//! glibc's arena at 99 MB with 56 MB of it free by the end of `cclab bench --one d`
//! (58 MB, 22 MB free, with the pool). Pool blocks are all one size, so any freed
//! block serves the next slot that needs one.

use std::collections::BinaryHeap;

/// Slot width: 2^20 ns (about 1 ms).
const SHIFT: u32 = 20;
const SLOTS: u64 = 4096;
/// Entries per pool block.
const BLOCK: usize = 16;
/// No block (end of a chain, or an empty slot).
const NIL: u32 = u32::MAX;

pub(crate) trait Timed: Ord + Copy {
    fn time(&self) -> u64;
}

pub(crate) struct Wheel<E: Timed> {
    /// Per slot: its newest block (NIL if empty) and how many entries that block holds;
    /// the older blocks of its chain are full.
    heads: Vec<(u32, u32)>,
    pool: BlockPool<E>,
    /// Absolute index of the slot most recently released into `ready`.
    base: u64,
    /// The entries of the released slots, ascending under `E`'s order, so the next (the
    /// greatest, as a `BinaryHeap` would pop it) is last.
    ready: Vec<E>,
    /// Entries pushed for a slot already released.
    late: BinaryHeap<E>,
    /// Entries beyond the wheel's horizon.
    far: BinaryHeap<E>,
    in_slots: usize,
}

/// Blocks of `BLOCK` entries, each with the index of the next block in its chain; the
/// free ones are chained from `free`.
struct BlockPool<E> {
    blocks: Vec<([E; BLOCK], u32)>,
    free: u32,
}

impl<E: Copy> BlockPool<E> {
    /// A block (its entries all `fill` until written) whose next block is `next`.
    fn take(&mut self, fill: E, next: u32) -> u32 {
        if self.free == NIL {
            self.blocks.push(([fill; BLOCK], next));
            return (self.blocks.len() - 1) as u32;
        }
        let b = self.free;
        self.free = std::mem::replace(&mut self.blocks[b as usize].1, next);
        b
    }

    /// Hands the entries of the chain from `head` (whose first block holds `n`) to
    /// `out`, and returns its blocks to the pool.
    fn drain_chain(&mut self, mut head: u32, mut n: usize, out: &mut impl Extend<E>) {
        while head != NIL {
            let (entries, next) = &mut self.blocks[head as usize];
            out.extend(entries[..n].iter().copied());
            let after = std::mem::replace(next, self.free);
            self.free = head;
            head = after;
            n = BLOCK;
        }
    }
}

impl<E: Timed> Wheel<E> {
    pub(crate) fn new() -> Wheel<E> {
        Wheel {
            heads: vec![(NIL, 0); SLOTS as usize],
            pool: BlockPool { blocks: Vec::new(), free: NIL },
            base: 0,
            ready: Vec::new(),
            late: BinaryHeap::new(),
            far: BinaryHeap::new(),
            in_slots: 0,
        }
    }

    pub(crate) fn push(&mut self, e: E) {
        let s = e.time() >> SHIFT;
        if s <= self.base {
            self.late.push(e);
        } else if s < self.base + SLOTS {
            self.push_slot((s % SLOTS) as usize, e);
        } else {
            self.far.push(e);
        }
    }

    fn push_slot(&mut self, i: usize, e: E) {
        let (mut head, mut n) = self.heads[i];
        if head == NIL || n as usize == BLOCK {
            head = self.pool.take(e, head);
            n = 0;
        }
        self.pool.blocks[head as usize].0[n as usize] = e;
        self.heads[i] = (head, n + 1);
        self.in_slots += 1;
    }

    /// The earliest entry (BinaryHeap order: the "greatest" under E's Ord), if any.
    pub(crate) fn peek(&mut self) -> Option<&E> {
        while self.ready.is_empty() && self.late.is_empty() {
            if self.in_slots == 0 {
                // Jump straight to the far heap's first slot, if any.
                let next = self.far.peek()?.time() >> SHIFT;
                self.base = next.max(self.base + 1) - 1;
            }
            self.base += 1;
            let i = (self.base % SLOTS) as usize;
            let (head, n) = std::mem::replace(&mut self.heads[i], (NIL, 0));
            if head != NIL {
                let before = self.ready.len();
                self.pool.drain_chain(head, n as usize, &mut self.ready);
                self.in_slots -= self.ready.len() - before;
            }
            // Bring far entries into the window as it moves.
            while let Some(f) = self.far.peek() {
                let s = f.time() >> SHIFT;
                if s >= self.base + SLOTS {
                    break;
                }
                let f = self.far.pop().expect("peeked");
                if s <= self.base {
                    self.ready.push(f);
                } else {
                    self.push_slot((s % SLOTS) as usize, f);
                }
            }
            // Entries are unique, so the unstable sort's order is the only one.
            self.ready.sort_unstable();
        }
        match (self.ready.last(), self.late.peek()) {
            (Some(r), Some(l)) => Some(if l > r { l } else { r }),
            (r, l) => r.or(l),
        }
    }

    pub(crate) fn pop(&mut self) -> Option<E> {
        let next = *self.peek()?;
        if self.late.peek() == Some(&next) {
            self.late.pop()
        } else {
            self.ready.pop()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;

    impl Timed for Reverse<(u64, u64)> {
        fn time(&self) -> u64 {
            self.0 .0
        }
    }

    #[test]
    fn pops_in_the_same_order_as_a_heap_with_interleaved_pushes() {
        let mut rng = Rng::from_seed(9);
        let mut w: Wheel<Reverse<(u64, u64)>> = Wheel::new();
        let mut h = BinaryHeap::new();
        let mut now = 0u64;
        let mut seq = 0;
        for _ in 0..200_000 {
            if rng.chance(0.55) || h.is_empty() {
                // Mostly near-future timers, some far beyond the horizon, some ties.
                let dt = match rng.below(10) {
                    0 => rng.below(20_000_000_000),
                    1 => 0,
                    _ => rng.below(400_000_000),
                };
                let e = Reverse((now + dt, seq));
                seq += 1;
                w.push(e);
                h.push(e);
            } else {
                let a = w.pop();
                let b = h.pop();
                assert_eq!(a, b);
                now = a.unwrap().0 .0;
            }
        }
        while let Some(b) = h.pop() {
            assert_eq!(w.pop(), Some(b));
        }
        assert_eq!(w.pop(), None);
    }

    /// Served slots give their blocks back: a steady load of timers over many turns of
    /// the wheel needs no more blocks than its peak does.
    #[test]
    fn blocks_are_reused_across_turns() {
        let mut rng = Rng::from_seed(3);
        let mut w: Wheel<Reverse<(u64, u64)>> = Wheel::new();
        let (outstanding, spread) = (2000u64, 200u64 << SHIFT);
        let mut now = 0;
        for seq in 0..outstanding {
            w.push(Reverse((rng.below(spread), seq)));
        }
        // Over ten turns of the wheel, one new timer per one served.
        for seq in outstanding..outstanding + 1_000_000 {
            now = w.pop().expect("timers pending").0 .0;
            w.push(Reverse((now + rng.below(spread), seq)));
        }
        assert!(now > 10 * (SLOTS << SHIFT), "{now}");
        // Full blocks for every entry, plus one partly filled block per occupied slot.
        let bound = outstanding as usize / BLOCK + 201;
        assert!(w.pool.blocks.len() <= bound, "{} blocks > {bound}", w.pool.blocks.len());
    }
}
