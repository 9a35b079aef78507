//! The engine's hot event queue: a priority queue tuned for the few entries it holds.
//!
//! Only FIFO heads are scheduled (see the engine's module doc), so the queue usually
//! holds a handful of events: the bottleneck's departure, the pipe's head, one head per
//! ACK path, the sampler. For so few, a `Vec` kept sorted with the next event last is
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

/// A max-queue (like `BinaryHeap`: `pop` returns the greatest entry).
pub(crate) struct SmallQueue<E: Ord> {
    /// Ascending, so the greatest entry is last; used while `heap` is empty.
    sorted: Vec<E>,
    /// Holds every entry while `large` (from outgrowing [`SORTED_MAX`] until back to
    /// [`SORTED_AGAIN`]).
    heap: BinaryHeap<E>,
    large: bool,
}

impl<E: Ord> SmallQueue<E> {
    pub(crate) fn new() -> SmallQueue<E> {
        SmallQueue { sorted: Vec::with_capacity(SORTED_MAX), heap: BinaryHeap::new(), large: false }
    }

    #[inline]
    pub(crate) fn push(&mut self, e: E) {
        if self.large {
            self.heap.push(e);
        } else if self.sorted.len() < SORTED_MAX {
            // Insertion from the end: the bottleneck's next departure, the most frequent
            // event, is usually the next due and stays last without moving anything.
            self.sorted.push(e);
            let mut i = self.sorted.len() - 1;
            while i > 0 && self.sorted[i - 1] > self.sorted[i] {
                self.sorted.swap(i - 1, i);
                i -= 1;
            }
        } else {
            self.large = true;
            self.heap.extend(self.sorted.drain(..));
            self.heap.push(e);
        }
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
            self.large = false;
            self.sorted.extend(self.heap.drain());
            self.sorted.sort_unstable();
        }
        e
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
