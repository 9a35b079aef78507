//! A first-in first-out ring of `Copy` values for the network's FIFOs: the pipes from the
//! bottleneck to the receivers and the ACK paths back. Every packet passes through one of
//! each, with a push, a pop and a few looks at the front, so these are among the
//! simulator's most frequent operations.
//!
//! Why not `VecDeque`: its capacity may be any size, so each position is wrapped with a
//! compare and a subtraction. Here the capacity is a power of two, a position is the head
//! plus an offset masked to the capacity, and a push or a pop is a store or a load and an
//! addition: about 1% fewer instructions in `cclab bench`'s cases (a) and (b). The rings
//! grow, by doubling, to the most a run holds at once and keep that room, as the
//! `VecDeque`s did. (The senders' scoreboards stay `VecDeque`s: with 100,000 flows their
//! rings are sized to the byte, which powers of two would not be.)

/// A FIFO of `T`. Its slots always hold values (those outside the live range are stale
/// copies), so that it needs neither `T: Default` nor uninitialised memory.
#[derive(Clone, Debug)]
pub(crate) struct Fifo<T: Copy> {
    /// Empty, or a power of two long.
    slots: Vec<T>,
    /// Where the front is: `head & (slots.len() - 1)`. It only ever grows (wrapping).
    head: usize,
    len: usize,
}

/// Slots of a ring's first allocation.
const FIRST_SLOTS: usize = 16;

impl<T: Copy> Default for Fifo<T> {
    fn default() -> Self {
        Fifo { slots: Vec::new(), head: 0, len: 0 }
    }
}

impl<T: Copy> Fifo<T> {
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        self.head.wrapping_add(i) & (self.slots.len() - 1)
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th value from the front, if there are that many.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i < self.len {
            Some(&self.slots[self.slot(i)])
        } else {
            None
        }
    }

    #[inline(always)]
    pub(crate) fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline(always)]
    pub(crate) fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    #[inline(always)]
    pub(crate) fn push_back(&mut self, value: T) {
        if self.len == self.slots.len() {
            self.grow(value);
        }
        let i = self.slot(self.len);
        self.slots[i] = value;
        self.len += 1;
    }

    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let front = *self.front()?;
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
        Some(front)
    }

    /// Doubles the room (at least [`FIRST_SLOTS`]), the live values moved to the start in
    /// order and the new slots filled with copies of `filler`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, filler: T) {
        let room = (2 * self.slots.len()).max(FIRST_SLOTS);
        let mut slots = Vec::with_capacity(room);
        slots.extend((0..self.len).map(|i| self.slots[self.slot(i)]));
        slots.resize(room, filler);
        self.slots = slots;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_vecdeque_through_growth_and_wrapping() {
        let mut rng = Rng::from_seed(17);
        let mut fifo = Fifo::default();
        let mut model = VecDeque::new();
        for step in 0..200_000u64 {
            // Lengths wander up past several doublings and back down to empty.
            let push_chance = if step % 40_000 < 20_000 { 0.6 } else { 0.4 };
            if rng.chance(push_chance) {
                fifo.push_back(step);
                model.push_back(step);
            } else {
                assert_eq!(fifo.pop_front(), model.pop_front());
            }
            assert_eq!(fifo.len(), model.len());
            assert_eq!(fifo.is_empty(), model.is_empty());
            assert_eq!(fifo.front(), model.front());
            assert_eq!(fifo.back(), model.back());
            let i = rng.below(model.len() as u64 + 2) as usize;
            assert_eq!(fifo.get(i), model.get(i));
        }
        assert!(fifo.slots.len() > FIRST_SLOTS, "the test must make the ring grow");
    }

    #[test]
    fn an_empty_ring_has_no_front_back_or_values() {
        let mut fifo: Fifo<u8> = Fifo::default();
        assert_eq!((fifo.front(), fifo.back(), fifo.get(0)), (None, None, None));
        assert_eq!(fifo.pop_front(), None);
        fifo.push_back(7);
        assert_eq!((fifo.front(), fifo.back()), (Some(&7), Some(&7)));
        assert_eq!(fifo.pop_front(), Some(7));
        assert!(fifo.is_empty());
    }
}
