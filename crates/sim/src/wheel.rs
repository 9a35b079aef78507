//! A calendar queue for per-flow timers (RTO, delayed ACK): O(1) insertion into ~1 ms
//! slots, and a small heap for the slot being served, so 10,000 flows' timers do not
//! make every event pay for a 20,000-entry binary heap. Order is exactly that of a heap
//! on (time, seq): entries of one slot are released into `ready` together, and
//! everything in `ready` precedes everything still in later slots.

use std::collections::BinaryHeap;

/// Slot width: 2^20 ns (about 1 ms).
const SHIFT: u32 = 20;
const SLOTS: u64 = 4096;

pub(crate) trait Timed: Ord + Copy {
    fn time(&self) -> u64;
}

pub(crate) struct Wheel<E: Timed> {
    slots: Vec<Vec<E>>,
    /// Absolute index of the slot most recently released into `ready`.
    base: u64,
    ready: BinaryHeap<E>,
    /// Entries beyond the wheel's horizon.
    far: BinaryHeap<E>,
    in_slots: usize,
}

impl<E: Timed> Wheel<E> {
    pub(crate) fn new() -> Wheel<E> {
        Wheel {
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            base: 0,
            ready: BinaryHeap::new(),
            far: BinaryHeap::new(),
            in_slots: 0,
        }
    }

    pub(crate) fn push(&mut self, e: E) {
        let s = e.time() >> SHIFT;
        if s <= self.base {
            self.ready.push(e);
        } else if s < self.base + SLOTS {
            self.slots[(s % SLOTS) as usize].push(e);
            self.in_slots += 1;
        } else {
            self.far.push(e);
        }
    }

    /// The earliest entry (BinaryHeap order: the "greatest" under E's Ord), if any.
    pub(crate) fn peek(&mut self) -> Option<&E> {
        while self.ready.is_empty() {
            if self.in_slots == 0 {
                // Jump straight to the far heap's first slot, if any.
                let next = self.far.peek()?.time() >> SHIFT;
                self.base = next.max(self.base + 1) - 1;
            }
            self.base += 1;
            let i = (self.base % SLOTS) as usize;
            if !self.slots[i].is_empty() {
                self.in_slots -= self.slots[i].len();
                let ready = &mut self.ready;
                ready.extend(self.slots[i].drain(..));
                release_spare(&mut self.slots[i]);
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
                    self.slots[(s % SLOTS) as usize].push(f);
                    self.in_slots += 1;
                }
            }
        }
        self.ready.peek()
    }

    pub(crate) fn pop(&mut self) -> Option<E> {
        self.peek()?;
        self.ready.pop()
    }
}

/// Gives back a drained slot's room beyond `MIN_SLOT` entries. Timers sit a few hundred
/// slots ahead of the clock (RTO, delayed ACK), so only those slots need room at any
/// time; a slot keeping its room for the rest of the wheel's turn would make 4096 slots
/// hold the peak load of each (tens of megabytes with 100,000 flows). Regrowing costs a
/// few allocations per busy slot. Only capacity changes, never order.
fn release_spare<E>(slot: &mut Vec<E>) {
    if slot.capacity() > MIN_SLOT {
        slot.shrink_to(MIN_SLOT);
    }
}

/// Entries a slot keeps room for however few it held.
const MIN_SLOT: usize = 16;

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
}
