//! The engine's hot event queue: a priority queue tuned for the few entries it holds.
//!
//! Only FIFO heads are scheduled (see the engine's module doc), so the queue usually
//! holds a handful of events: one head per ACK path, the sampler, the reverse bottleneck's
//! departure and pipe head where modelled (the forward ones are kept beside it, in `Net`).
//! For so few, a `Vec` kept sorted with the next event last is
//! cheaper than a binary heap: taking the next event is a plain `Vec::pop` (a heap's pop
//! sifts down and up again), and placing a new one is a short insertion from the end. Past [`SORTED_MAX`] entries (every flow's start event at time zero,
//! many distinct return delays or cross sources) insertion would cost O(n), so the queue
//! turns into a binary heap, and back once it has shrunk to [`SORTED_AGAIN`] (the gap
//! between the two keeps a queue near the limit from switching on every event).
//!
//! Entries must be totally ordered with no two equal (the engine's (time, sequence)
//! keys are unique), so the order of pops is the same whichever form holds them.

use std::collections::BinaryHeap;

/// Entries the sorted form holds before the queue becomes a heap.
const SORTED_MAX: usize = 64;
/// Entries at which a heap goes back to the sorted form.
const SORTED_AGAIN: usize = 16;

/// Room a heap keeps once the queue is sorted again.
const KEEP_HEAP_ROOM: usize = 1024;

/// A max-queue (like `BinaryHeap`: `pop` returns the greatest entry).
pub(crate) struct SmallQueue<E: Ord + Copy> {
    /// Ascending, so the greatest entry is last; used while `heap` is empty.
    sorted: Vec<E>,
    /// Holds every entry while `large` (from outgrowing [`SORTED_MAX`] until back to
    /// [`SORTED_AGAIN`]).
    heap: BinaryHeap<E>,
    large: bool,
}

impl<E: Ord + Copy> SmallQueue<E> {
    pub(crate) fn new() -> SmallQueue<E> {
        SmallQueue { sorted: Vec::with_capacity(SORTED_MAX), heap: BinaryHeap::new(), large: false }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, e: E) {
        if self.large || self.sorted.len() == SORTED_MAX {
            return self.push_large(e);
        }
        // Insertion from the end: an event due sooner than the rest (an ACK path's head
        // on a path of its own) stays last without moving anything. Entries
        // due before `e` move up one place each while `e` stays in registers (a swap per
        // step, or `Vec::insert`'s call to memmove, sends `e` through memory and back).
        let v = &mut self.sorted;
        v.push(e);
        let mut i = v.len() - 1;
        while i > 0 && v[i - 1] > e {
            v[i] = v[i - 1];
            i -= 1;
        }
        v[i] = e;
    }

    /// Push while the queue is (or is about to become) a heap.
    #[cold]
    #[inline(never)]
    fn push_large(&mut self, e: E) {
        if !self.large {
            self.large = true;
            self.heap.extend(self.sorted.drain(..));
        }
        self.heap.push(e);
    }

    /// The greatest entry, if any.
    #[inline]
    pub(crate) fn peek(&self) -> Option<&E> {
        if self.large {
            self.heap.peek()
        } else {
            self.sorted.last()
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<E> {
        if !self.large {
            return self.sorted.pop();
        }
        let e = self.heap.pop();
        if self.heap.len() <= SORTED_AGAIN {
            self.back_to_sorted();
        }
        e
    }

    #[cold]
    #[inline(never)]
    fn back_to_sorted(&mut self) {
        self.large = false;
        self.sorted.extend(self.heap.drain());
        self.sorted.sort_unstable();
        // Gives back the room of a past crowd (100,000 flows' start events: 3 MB), which
        // the handful of entries left will not need again; a heap that only just passed
        // the limit keeps its room, so a queue near the limit does not reallocate.
        if self.heap.capacity() > KEEP_HEAP_ROOM {
            self.heap = BinaryHeap::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;

    /// Random pushes and pops, at sizes around the switch to a heap and far beyond it,
    /// give the same pops as a binary heap.
    #[test]
    fn pops_in_the_same_order_as_a_heap() {
        let mut rng = Rng::from_seed(5);
        for max_len in [3, SORTED_MAX - 1, SORTED_MAX + 1, 1000] {
            let mut q = SmallQueue::new();
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            for _ in 0..50_000 {
                if h.len() < max_len && (rng.chance(0.5) || h.is_empty()) {
                    let e = Reverse((rng.below(1000), seq));
                    seq += 1;
                    q.push(e);
                    h.push(e);
                } else {
                    assert_eq!(q.peek(), h.peek());
                    assert_eq!(q.pop(), h.pop());
                }
            }
            while let Some(e) = h.pop() {
                assert_eq!(q.pop(), Some(e));
            }
            assert_eq!(q.pop(), None);
        }
    }
}
