//! The SACK blocks a receiver reports, kept as Linux keeps them (`tp->selective_acks`,
//! net/ipv4/tcp_input.c): at most [`TCP_NUM_SACKS`] blocks, the most recently changed
//! first, of which an ACK carries the first [`MAX_SACK_BLOCKS`] (three, as fit beside
//! timestamps).
//!
//! - A segment held out of order extends the block it touches, or starts a new one,
//!   which moves to the front; blocks it joins merge into it
//!   (`tcp_sack_new_ofo_skb`, `tcp_sack_extend`, `tcp_sack_maybe_coalesce`). With four
//!   blocks already, a new one pushes the last out of the list.
//! - When `rcv_nxt` moves, the blocks it covers go (`tcp_sack_remove`).
//! - Before a segment changes a block that is not among the first
//!   [`BLOCKS_EXPECTED`] (or starts a new one behind two or more), a compressed ACK
//!   that is waiting is sent at once, so that every block has been in the first two
//!   places of some ACK before it can fall out of the reported three (Linux 5.8,
//!   "tcp: tcp_sack_new_ofo_skb() should be more conservative"). Without this rule a
//!   receiver that compresses ACKs reports three of the dozens of blocks a slow-start
//!   overshoot leaves, and the sender resends segments that had arrived.

use super::MAX_SACK_BLOCKS;

/// Linux `TCP_NUM_SACKS`: blocks remembered.
const TCP_NUM_SACKS: usize = 4;

/// Linux `TCP_SACK_BLOCKS_EXPECTED`: the places of an ACK's blocks counted on to reach
/// the sender ("given that SACK packets might be lost, be conservative and use 2").
const BLOCKS_EXPECTED: usize = 2;

/// The blocks an ACK carries, in order, and how many of its places hold one.
pub(super) type Reported = ([(u32, u32); MAX_SACK_BLOCKS], u8);

/// Segment ranges `[start, end)`, most recently changed first. The places past `len`
/// hold (0, 0), so that an ACK copies its first three places whole (every ACK takes
/// them, in order or not: a copy of a length known only at run time costs a call).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SackBlocks {
    blocks: [(u32, u32); TCP_NUM_SACKS],
    len: u8,
}

/// `tcp_sack_extend`: whether `seg` overlaps or touches `block`, which then grows to hold it.
fn extend(block: &mut (u32, u32), seg: (u32, u32)) -> bool {
    if seg.0 > block.1 || block.0 > seg.1 {
        return false;
    }
    *block = (block.0.min(seg.0), block.1.max(seg.1));
    true
}

impl SackBlocks {
    fn len(&self) -> usize {
        self.len as usize
    }

    /// Records `seg`, held out of order (held already or not): its block moves to the
    /// front. Where a compressed ACK is `waiting` and must leave first, returns the blocks
    /// it carries: as Linux has them at that point, a block the segment extends already
    /// extended but not yet moved, a new block not yet there.
    pub(super) fn on_out_of_order(&mut self, seg: (u32, u32), waiting: bool) -> Option<Reported> {
        let n = self.len();
        if let Some(i) = (0..n).find(|&i| extend(&mut self.blocks[i], seg)) {
            let flushed = (waiting && i >= BLOCKS_EXPECTED).then(|| self.reported());
            self.blocks[..=i].rotate_right(1);
            self.coalesce_front();
            return flushed;
        }
        let flushed = (waiting && n >= BLOCKS_EXPECTED).then(|| self.reported());
        let kept = n.min(TCP_NUM_SACKS - 1);
        self.blocks[..=kept].rotate_right(1);
        self.blocks[0] = seg;
        self.len = (kept + 1) as u8;
        flushed
    }

    /// The front block absorbs the others it now overlaps or touches.
    fn coalesce_front(&mut self) {
        let mut i = 1;
        while i < self.len() {
            let other = self.blocks[i];
            if extend(&mut self.blocks[0], other) {
                let n = self.len();
                self.blocks.copy_within(i + 1..n, i);
                self.blocks[n - 1] = (0, 0);
                self.len -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `rcv_nxt` moved: the blocks it covers go; all of them when nothing is held.
    pub(super) fn on_advance(&mut self, rcv_nxt: u32, nothing_held: bool) {
        if nothing_held {
            *self = SackBlocks::default();
            return;
        }
        let mut kept = 0;
        for i in 0..self.len() {
            if self.blocks[i].0 > rcv_nxt {
                self.blocks[kept] = self.blocks[i];
                kept += 1;
            }
        }
        self.blocks[kept..].fill((0, 0));
        self.len = kept as u8;
    }

    /// The blocks an ACK carries, in order, and how many.
    #[inline]
    pub(super) fn reported(&self) -> Reported {
        let [a, b, c, _] = self.blocks;
        ([a, b, c], self.len.min(MAX_SACK_BLOCKS as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(s: &SackBlocks) -> Vec<(u32, u32)> {
        assert!(s.blocks[s.len()..].iter().all(|&b| b == (0, 0)), "{s:?}");
        s.blocks[..s.len()].to_vec()
    }

    #[test]
    fn the_latest_block_comes_first_and_a_fifth_pushes_the_oldest_out() {
        let mut s = SackBlocks::default();
        for seq in [2, 4, 6, 8, 10] {
            s.on_out_of_order((seq, seq + 1), false);
        }
        assert_eq!(blocks(&s), [(10, 11), (8, 9), (6, 7), (4, 5)]);
        // Extending the third block moves it to the front.
        s.on_out_of_order((7, 8), false);
        assert_eq!(blocks(&s), [(6, 9), (10, 11), (4, 5)], "6-7 and 8-9 joined by 7");
        assert_eq!(s.reported(), ([(6, 9), (10, 11), (4, 5)], 3));
    }

    /// The blocks `seg` makes a waiting ACK carry, if it makes one leave.
    fn flushed_by(s: &mut SackBlocks, seg: (u32, u32)) -> Option<Vec<(u32, u32)>> {
        let carried = s.on_out_of_order(seg, true);
        carried.map(|(b, n)| b[..usize::from(n)].to_vec())
    }

    #[test]
    fn an_ack_is_due_before_a_block_behind_the_first_two_changes() {
        let mut s = SackBlocks::default();
        assert_eq!(flushed_by(&mut s, (2, 3)), None, "no block yet");
        assert_eq!(flushed_by(&mut s, (4, 5)), None, "a second block");
        assert_eq!(flushed_by(&mut s, (5, 6)), None, "the first block grows");
        // A third block would push the second to third place: the ACK leaves without it.
        assert_eq!(flushed_by(&mut s, (8, 9)), Some(vec![(4, 6), (2, 3)]));
        // Extending the third block: the ACK carries it extended, in its old place.
        assert_eq!(flushed_by(&mut s, (1, 2)), Some(vec![(8, 9), (4, 6), (1, 3)]));
        assert_eq!(blocks(&s), [(1, 3), (8, 9), (4, 6)]);
        assert_eq!(flushed_by(&mut s, (9, 10)), None, "the second block grows");
    }

    #[test]
    fn blocks_that_rcv_nxt_covers_go() {
        let mut s = SackBlocks::default();
        for seq in [3, 6, 9] {
            s.on_out_of_order((seq, seq + 1), false);
        }
        s.on_advance(7, false);
        assert_eq!(blocks(&s), [(9, 10)]);
        s.on_advance(10, true);
        assert_eq!(blocks(&s), []);
    }
}
