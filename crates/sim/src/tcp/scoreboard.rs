//! The sender's scoreboard: one record per outstanding segment `[snd_una, snd_nxt)` with
//! its SACKed / lost / retransmitted marks and the counters Linux keeps beside its
//! retransmission queue (`sacked_out`, `lost_out`, `retrans_out`; net/ipv4/tcp_input.c
//! `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`, `tcp_mark_head_lost`,
//! `tcp_timeout_mark_lost`).
//!
//! Loss marking with SACK is RFC 6675 `IsLost` with DupThresh = 3, done incrementally: a
//! scan pointer walks the scoreboard once, so an ACK costs O(newly acknowledged) in the
//! common case, never O(window). SACK blocks are merged into the sender's own sorted
//! ranges, and only the parts of a block not already SACKed are walked.
//!
//! Without SACK (NewReno, Tahoe) `sacked_out` counts duplicate ACKs instead, as Linux's
//! `tcp_add_reno_sack` / `tcp_remove_reno_sacks` / `tcp_limit_reno_sacked` do.

use super::Ack;
use std::collections::VecDeque;

pub(super) const SACKED: u8 = 1;
pub(super) const LOST: u8 = 2;
/// Retransmitted and the retransmission not yet known delivered or lost.
pub(super) const RETRANS: u8 = 4;
/// Ever retransmitted (Karn: no RTT sample from it).
pub(super) const EVER_RETRANS: u8 = 8;
/// Sent while the flow was application-limited (tcp_rate.c: `tp->app_limited` set at
/// send time).
pub(super) const APP_LIMITED: u8 = 16;

/// Segment records a scoreboard keeps room for even when little is outstanding.
const MIN_RING: usize = 4;

/// RFC 6675 DupThresh / Linux's default reordering.
pub(super) const DUPTHRESH: u32 = 3;

/// One outstanding segment, in 24 bytes: the scoreboard is the simulator's largest
/// per-flow structure, and an ACK's first touch of it is a cache miss, so the fields are
/// packed. Times are below 2^56 ns (2.28 years; a run lasts at most 1,000,000 s), which
/// leaves the top byte of each 64-bit time free: one holds the flags, the other the top
/// of the send interval.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SegInfo {
    /// Last (re)transmission time, ns (low 56 bits); the flags (top 8).
    sent_flags: u64,
    /// tcp_rate.c: `tp->delivered_mstamp` at send time, ns (low 56 bits); bits 32..40 of
    /// the send interval (top 8).
    delivered_time_hi: u64,
    /// `tp->delivered` at send time.
    pub(super) delivered: u32,
    /// Low 32 bits of the send interval: send time minus `tp->first_tx_mstamp` at send
    /// time, in us. `tcp_rate_gen` only uses it in max(send, ACK interval) / 1000, and
    /// rounding down commutes with max, so us lose nothing; 40 bits hold 12.7 days.
    send_elapsed_lo: u32,
}

/// A record's size, for callers that ask for records to be loaded ahead.
pub(crate) const RECORD_BYTES: usize = size_of::<SegInfo>();

const TIME_BITS: u32 = 56;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;

impl SegInfo {
    /// The record of a segment sent at `sent` with `flags`, when `delivered` had been
    /// delivered, the last of it at `delivered_time`, and the sending interval had begun
    /// at `first_tx` (all ns).
    #[inline]
    pub(super) fn new(
        sent: u64,
        flags: u8,
        delivered: u32,
        delivered_time: u64,
        first_tx: u64,
    ) -> SegInfo {
        debug_assert!(sent <= TIME_MASK && delivered_time <= TIME_MASK);
        let elapsed_us = (sent.saturating_sub(first_tx) / 1000).min((1 << 40) - 1);
        SegInfo {
            sent_flags: sent | (flags as u64) << TIME_BITS,
            delivered_time_hi: delivered_time | (elapsed_us >> 32) << TIME_BITS,
            delivered,
            send_elapsed_lo: elapsed_us as u32,
        }
    }
    #[inline]
    pub(super) fn sent(&self) -> u64 {
        self.sent_flags & TIME_MASK
    }
    #[inline]
    pub(super) fn flags(&self) -> u8 {
        (self.sent_flags >> TIME_BITS) as u8
    }
    #[inline]
    pub(super) fn set_flags(&mut self, flags: u8) {
        self.sent_flags = self.sent_flags & TIME_MASK | (flags as u64) << TIME_BITS;
    }
    #[inline]
    pub(super) fn delivered_time(&self) -> u64 {
        self.delivered_time_hi & TIME_MASK
    }
    /// The send interval at send time, us.
    #[inline]
    pub(super) fn send_elapsed_us(&self) -> u64 {
        (self.delivered_time_hi >> TIME_BITS) << 32 | self.send_elapsed_lo as u64
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Scoreboard {
    snd_una: u32,
    snd_nxt: u32,
    /// One record per segment of `[snd_una, snd_nxt)`.
    segs: VecDeque<SegInfo>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// The sender's own merged SACK ranges within `[snd_una, snd_nxt)`, sorted.
    sacked_ranges: Vec<(u32, u32)>,
    /// Loss-marking scan: segments below `scan` have been judged; `scan_sacked` SACKed
    /// segments lie in `[snd_una, scan)`.
    scan: u32,
    scan_sacked: u32,
    /// Lowest segment that may be lost and not yet retransmitted; `lost_limit`: one past
    /// the highest segment ever marked lost.
    rexmit_hint: u32,
    lost_limit: u32,
}

impl Scoreboard {
    /// Where the ring's two ends lie, so that a caller can ask for them to be loaded
    /// before an ACK: the record of `snd_una`, which the ACK's cleaning reads first, and
    /// the slot the next new segment's record will be written to (None for an empty ring).
    /// When the records run to the end of the buffer the next slot is its start, which
    /// the ring does not show; the address past the end is given then, and a prefetch of
    /// it merely loads a line that is not used.
    #[inline]
    pub(super) fn ends_address(&self) -> Option<(usize, usize)> {
        let (a, b) = self.segs.as_slices();
        let front = a.first()?;
        let back = if b.is_empty() { a.as_ptr_range().end } else { b.as_ptr_range().end };
        Some((front as *const SegInfo as usize, back as usize))
    }
    #[inline]
    pub(super) fn snd_una(&self) -> u32 {
        self.snd_una
    }
    #[inline]
    pub(super) fn snd_nxt(&self) -> u32 {
        self.snd_nxt
    }
    #[inline]
    pub(super) fn packets_out(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }
    #[inline]
    pub(super) fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    #[inline]
    pub(super) fn lost_out(&self) -> u32 {
        self.lost_out
    }
    #[inline]
    pub(super) fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// Linux `tcp_packets_in_flight`: packets_out - (sacked + lost) + retransmitted.
    #[inline]
    pub(super) fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    // ----- sending -----

    /// A new segment `snd_nxt` goes out with `info`; returns its number.
    pub(super) fn push(&mut self, info: SegInfo) -> u32 {
        if self.segs.len() == self.segs.capacity() {
            self.grow_ring();
        }
        self.segs.push_back(info);
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        seq
    }

    /// Segment `seq` (marked lost) is sent again with `info`'s send-time state.
    pub(super) fn retransmit(&mut self, seq: u32, mut info: SegInfo) {
        let s = &mut self.segs[(seq - self.snd_una) as usize];
        info.set_flags(info.flags() | s.flags() | RETRANS | EVER_RETRANS);
        *s = info;
        self.retrans_out += 1;
    }

    /// Segment `seq` is sent again as a tail-loss probe, with `info`'s send-time state:
    /// Linux sends it with `__tcp_retransmit_skb`, not `tcp_retransmit_skb`, so it gets
    /// only the ever-retransmitted mark (Karn) and a new send time, neither the
    /// retransmitted mark nor a place in `retrans_out`: it is not marked lost, and is
    /// counted in flight once.
    pub(super) fn resend_as_probe(&mut self, seq: u32, mut info: SegInfo) {
        let s = &mut self.segs[(seq - self.snd_una) as usize];
        info.set_flags(info.flags() | s.flags() | EVER_RETRANS);
        *s = info;
    }

    /// The lowest segment marked lost and not retransmitted, if any (amortised O(1)).
    pub(super) fn next_lost(&mut self) -> Option<u32> {
        // Every segment in retransmission is also marked lost, so when all lost segments
        // are being retransmitted there is nothing to find.
        if self.lost_out == 0 || self.lost_out <= self.retrans_out {
            return None;
        }
        let mut s = self.rexmit_hint.max(self.snd_una);
        let end = self.lost_limit.min(self.snd_nxt);
        while s < end {
            let f = self.segs[(s - self.snd_una) as usize].flags();
            if f & LOST != 0 && f & RETRANS == 0 {
                self.rexmit_hint = s;
                return Some(s);
            }
            s += 1;
        }
        self.rexmit_hint = s;
        None
    }

    /// The record of outstanding segment `seq`.
    #[inline]
    pub(super) fn seg(&self, seq: u32) -> SegInfo {
        self.segs[(seq - self.snd_una) as usize]
    }

    /// The first segment from `seq` on that is not SACKed (`snd_nxt` if none).
    #[inline]
    pub(super) fn skip_sacked(&self, seq: u32) -> u32 {
        let i = self.sacked_ranges.partition_point(|r| r.1 <= seq);
        match self.sacked_ranges.get(i) {
            Some(&(a, b)) if a <= seq => b,
            _ => seq,
        }
    }

    /// One past the highest SACKed segment, if any is SACKed (Linux's "fack").
    #[inline]
    pub(super) fn sacked_end(&self) -> Option<u32> {
        self.sacked_ranges.last().map(|r| r.1)
    }

    // ----- acknowledgements -----

    /// SACK-tags the ACK's blocks, clipped to `[max(ack, snd_una), snd_nxt)`. Each newly
    /// SACKed segment goes to `newly(seq, info)` (with its flags from before the ACK).
    /// Returns how many were newly SACKed.
    pub(super) fn tag_sacks(&mut self, ack: &Ack, newly: &mut impl FnMut(u32, SegInfo)) -> u32 {
        let mut n = 0;
        for &(a, b) in ack.sack_blocks() {
            let a = a.max(ack.ack).max(self.snd_una);
            let b = b.min(self.snd_nxt);
            if a < b {
                n += self.sack_range(a, b, newly);
            }
        }
        n
    }

    /// SACK-tags `[a, b)`, walking only the gaps between the ranges already SACKed, then
    /// merges `[a, b)` into them. Returns the number of newly SACKed segments.
    fn sack_range(&mut self, a: u32, b: u32, newly: &mut impl FnMut(u32, SegInfo)) -> u32 {
        let mut count = 0;
        let mut cur = a;
        let mut i = self.sacked_ranges.partition_point(|r| r.1 < a);
        while cur < b {
            let gap_end = if i < self.sacked_ranges.len() && self.sacked_ranges[i].0 <= cur {
                cur = cur.max(self.sacked_ranges[i].1);
                i += 1;
                continue;
            } else if i < self.sacked_ranges.len() {
                self.sacked_ranges[i].0.min(b)
            } else {
                b
            };
            for seq in cur..gap_end {
                count += 1;
                let info = self.mark_sacked(seq);
                newly(seq, info);
            }
            cur = gap_end;
        }
        self.merge_range(a, b);
        count
    }

    /// Marks `seq` SACKed, clearing its lost and retransmitted marks; returns its record
    /// as it was before.
    fn mark_sacked(&mut self, seq: u32) -> SegInfo {
        let idx = (seq - self.snd_una) as usize;
        let info = self.segs[idx];
        let f = info.flags();
        self.segs[idx].set_flags((f | SACKED) & !(LOST | RETRANS));
        if f & LOST != 0 {
            self.lost_out -= 1;
        }
        if f & RETRANS != 0 {
            self.retrans_out -= 1;
        }
        self.sacked_out += 1;
        if seq < self.scan {
            self.scan_sacked += 1;
        }
        info
    }

    fn merge_range(&mut self, a: u32, b: u32) {
        let lo = self.sacked_ranges.partition_point(|r| r.1 < a);
        let hi = self.sacked_ranges.partition_point(|r| r.0 <= b);
        if lo == hi {
            self.sacked_ranges.insert(lo, (a, b));
        } else {
            let na = a.min(self.sacked_ranges[lo].0);
            let nb = b.max(self.sacked_ranges[hi - 1].1);
            self.sacked_ranges[lo] = (na, nb);
            self.sacked_ranges.drain(lo + 1..hi);
        }
    }

    /// Cumulative ACK up to `ack` (`tcp_clean_rtx_queue`): every removed segment goes to
    /// `removed(info)`, SACKed or not. Returns how many of them were not SACKed before,
    /// i.e. are delivered by this ACK.
    ///
    /// Kept out of line: inlined into `TcpSender::on_ack` it made case (a) of `cclab bench`
    /// about 5% slower.
    #[inline(never)]
    pub(super) fn clean(&mut self, ack: u32, removed: &mut impl FnMut(SegInfo)) -> u32 {
        let prior_una = self.snd_una;
        let mut acked = 0u32;
        while self.snd_una < ack {
            let info = self.segs.pop_front().expect("scoreboard covers snd_una..snd_nxt");
            let seq = self.snd_una;
            self.snd_una += 1;
            removed(info);
            let flags = info.flags();
            if flags & SACKED != 0 {
                self.sacked_out -= 1;
                if seq < self.scan {
                    self.scan_sacked -= 1;
                }
                continue;
            }
            acked += 1;
            if flags & LOST != 0 {
                self.lost_out -= 1;
            }
            if flags & RETRANS != 0 {
                self.retrans_out -= 1;
            }
        }
        // Forget SACK ranges now below snd_una. They are sorted and disjoint, so those
        // lie at the front and only the first one left can start below it: after a
        // burst of drops a recovery holds hundreds of ranges, and each ACK costs a search
        // here, not a pass over all of them.
        if self.snd_una > prior_una && !self.sacked_ranges.is_empty() {
            let una = self.snd_una;
            let below = self.sacked_ranges.partition_point(|r| r.1 <= una);
            self.sacked_ranges.drain(..below);
            if let Some(first) = self.sacked_ranges.first_mut() {
                first.0 = first.0.max(una);
            }
            super::release_if_empty(&mut self.sacked_ranges);
        }
        self.release_spare();
        acked
    }

    /// Gives back ring space a past, larger window left behind: once at most a quarter
    /// of the ring is in use, it shrinks to twice what is outstanding (at least
    /// `MIN_RING`). With 100,000 flows the rings sized by slow start's peak would
    /// otherwise hold several times the packets in flight. Only the capacity changes,
    /// so no result depends on it.
    #[inline]
    fn release_spare(&mut self) {
        let cap = self.segs.capacity();
        if cap > MIN_RING && self.segs.len() * 4 <= cap {
            self.shrink_ring();
        }
    }

    /// Grows a full ring by half (at least to `MIN_RING`), not the doubling `push_back`
    /// would do: with 100,000 flows in slow start, doubled rings held a third more than
    /// the windows. Only the capacity changes.
    #[cold]
    #[inline(never)]
    fn grow_ring(&mut self) {
        let len = self.segs.len();
        self.segs.reserve_exact((len / 2).max(MIN_RING - len.min(MIN_RING)).max(1));
    }

    /// Out of line, so that the per-ACK path stays small.
    #[cold]
    #[inline(never)]
    fn shrink_ring(&mut self) {
        self.segs.shrink_to((self.segs.len() * 2).max(MIN_RING));
    }

    // ----- duplicate ACKs without SACK -----

    /// Linux `tcp_add_reno_sack`: a duplicate ACK counts as one SACKed segment, as long as
    /// SACKed and lost segments do not exceed what is outstanding.
    pub(super) fn add_reno_sack(&mut self) {
        if self.sacked_out + self.lost_out < self.packets_out() {
            self.sacked_out += 1;
        }
    }

    /// Linux `tcp_remove_reno_sacks` for an ACK that advanced `snd_una` over `acked`
    /// segments: one of them filled a hole, the rest were already counted as duplicate
    /// ACKs. Returns the segments this ACK newly delivers (at least 1).
    pub(super) fn remove_reno_sacks(&mut self, acked: u32) -> u32 {
        let delivered = acked.saturating_sub(self.sacked_out).max(1);
        self.sacked_out = self.sacked_out.saturating_sub(acked.saturating_sub(1));
        delivered
    }

    /// Linux `tcp_limit_reno_sacked`: emulated SACKs never exceed what is not marked lost.
    pub(super) fn limit_reno_sacked(&mut self) {
        let out = self.packets_out();
        self.sacked_out = self.sacked_out.min(out - self.lost_out.min(out));
    }

    /// Forgets the duplicate ACKs counted as SACKs (without SACK, after a timeout).
    pub(super) fn reset_reno_sacks(&mut self) {
        self.sacked_out = 0;
    }

    // ----- loss marking -----

    /// Marks `seq` lost unless it is SACKed or already lost.
    pub(super) fn mark_lost(&mut self, seq: u32) {
        let i = (seq - self.snd_una) as usize;
        let s = &mut self.segs[i];
        if s.flags() & (LOST | SACKED) != 0 {
            return;
        }
        s.set_flags(s.flags() | LOST);
        self.lost_out += 1;
        self.rexmit_hint = self.rexmit_hint.min(seq);
        self.lost_limit = self.lost_limit.max(seq + 1);
    }

    /// The retransmission of `seq` (marked lost and retransmitted) is lost too (Linux
    /// `tcp_mark_skb_lost` on a retransmitted segment): it is due to be sent again.
    pub(super) fn mark_retransmission_lost(&mut self, seq: u32) {
        let s = &mut self.segs[(seq - self.snd_una) as usize];
        debug_assert_eq!(s.flags() & (LOST | RETRANS), LOST | RETRANS);
        s.set_flags(s.flags() & !RETRANS);
        self.retrans_out -= 1;
        self.rexmit_hint = self.rexmit_hint.min(seq);
    }

    /// RFC 6675 IsLost, incrementally: advances the scan while at least DupThresh SACKed
    /// segments lie above the scan point, marking the un-SACKed ones it passes lost.
    pub(super) fn mark_lost_by_sacks(&mut self) {
        if self.scan < self.snd_una {
            self.scan = self.snd_una;
            self.scan_sacked = 0;
        }
        while self.scan < self.snd_nxt {
            let f = self.segs[(self.scan - self.snd_una) as usize].flags();
            let here = (f & SACKED != 0) as u32;
            if self.sacked_out - self.scan_sacked - here < DUPTHRESH {
                break;
            }
            if here == 0 {
                self.mark_lost(self.scan);
            }
            self.scan_sacked += here;
            self.scan += 1;
        }
    }

    /// Marks every un-SACKed outstanding segment lost (RTO, Tahoe), clearing
    /// retransmission marks as `tcp_timeout_mark_lost` does.
    pub(super) fn mark_all_lost(&mut self) {
        self.retrans_out = 0;
        let mut lost = 0;
        for s in self.segs.iter_mut() {
            let mut f = s.flags() & !RETRANS;
            if f & SACKED == 0 {
                f |= LOST;
                lost += 1;
            }
            s.set_flags(f);
        }
        self.lost_out = lost;
        self.rexmit_hint = self.snd_una;
        self.lost_limit = self.snd_nxt;
        self.scan = self.snd_nxt;
        self.scan_sacked = self.sacked_out;
    }

    /// Forgets every lost and retransmitted mark (a loss judged spurious). The copies in
    /// flight are forgotten too (Linux keeps counting them in `retrans_out`; here every
    /// segment in retransmission is also marked lost, which keeps the retransmit scan
    /// simple), so in_flight is briefly understated.
    pub(super) fn clear_loss_marks(&mut self) {
        if self.lost_out > 0 || self.retrans_out > 0 {
            for s in self.segs.iter_mut() {
                s.set_flags(s.flags() & !(LOST | RETRANS));
            }
            self.lost_out = 0;
            self.retrans_out = 0;
        }
    }

    // ----- checks -----

    /// Checks the counters, SACK ranges and scan against a full recount (for tests;
    /// O(window)). `sack` says whether SACK is in use (else `sacked_out` counts
    /// duplicate ACKs and is not checked against the marks).
    pub(super) fn check(&self, sack: bool) -> Result<(), String> {
        self.check_counters(sack)?;
        if sack {
            self.check_sack_ranges()?;
        }
        Ok(())
    }

    fn check_counters(&self, sack: bool) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for s in &self.segs {
            let f = s.flags();
            sacked += (f & SACKED != 0) as u32;
            lost += (f & LOST != 0) as u32;
            retrans += (f & RETRANS != 0) as u32;
            if f & SACKED != 0 && f & (LOST | RETRANS) != 0 {
                return Err("a SACKed segment is also marked lost or retransmitted".into());
            }
        }
        let out = self.packets_out();
        if self.segs.len() as u32 != out {
            return Err(format!(
                "scoreboard holds {} segments, packets_out is {out}",
                self.segs.len()
            ));
        }
        if sack && sacked != self.sacked_out {
            return Err(format!("sacked_out {} but {} segments SACKed", self.sacked_out, sacked));
        }
        if lost != self.lost_out {
            return Err(format!("lost_out {} but {} segments lost", self.lost_out, lost));
        }
        if retrans != self.retrans_out {
            return Err(format!(
                "retrans_out {} but {} segments in retransmission",
                self.retrans_out, retrans
            ));
        }
        if self.sacked_out + self.lost_out > out {
            return Err(format!(
                "sacked {} + lost {} exceed packets_out {out}",
                self.sacked_out, self.lost_out
            ));
        }
        if self.retrans_out > self.lost_out {
            return Err(format!(
                "retrans_out {} exceeds lost_out {}",
                self.retrans_out, self.lost_out
            ));
        }
        Ok(())
    }

    fn check_sack_ranges(&self) -> Result<(), String> {
        let mut inside = 0;
        for r in &self.sacked_ranges {
            if r.0 < self.snd_una || r.1 > self.snd_nxt || r.0 >= r.1 {
                return Err(format!(
                    "SACK range {r:?} outside [{}, {})",
                    self.snd_una, self.snd_nxt
                ));
            }
            inside += r.1 - r.0;
        }
        if inside != self.sacked_out {
            return Err(format!(
                "SACK ranges cover {inside} segments, sacked_out {}",
                self.sacked_out
            ));
        }
        let below = self
            .segs
            .iter()
            .take(self.scan.saturating_sub(self.snd_una) as usize)
            .filter(|s| s.flags() & SACKED != 0)
            .count() as u32;
        if self.scan >= self.snd_una && below != self.scan_sacked {
            return Err(format!(
                "scan_sacked {} but {} SACKed below the scan",
                self.scan_sacked, below
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scoreboard with segments `0..n` sent, segment `i` at `i` ms.
    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            let t = i as u64 * 1_000_000;
            b.push(SegInfo::new(t, 0, 0, t, t));
        }
        b
    }

    fn ack(cum: u32, blocks: &[(u32, u32)]) -> Ack {
        Ack::hand_made(cum, blocks, cclab_units::Time::ZERO)
    }

    /// SACK-tags `a`'s blocks; returns the newly SACKed segment numbers.
    fn tag(b: &mut Scoreboard, a: &Ack) -> Vec<u32> {
        let mut seen = Vec::new();
        let n = b.tag_sacks(a, &mut |seq, _| seen.push(seq));
        assert_eq!(n as usize, seen.len());
        seen
    }

    #[test]
    fn three_sacked_segments_above_a_hole_make_it_lost() {
        let mut b = board(10);
        assert_eq!(tag(&mut b, &ack(0, &[(3, 5)])), [3, 4]);
        b.mark_lost_by_sacks();
        assert_eq!(b.lost_out(), 0, "two SACKed above: not yet lost");
        assert_eq!(tag(&mut b, &ack(0, &[(5, 6), (3, 5)])), [5]);
        b.mark_lost_by_sacks();
        // Segments 0, 1 and 2 each have three SACKed above them (3, 4 and 5).
        assert_eq!((b.sacked_out(), b.lost_out()), (3, 3));
        assert_eq!(b.in_flight(), 10 - 3 - 3);
        assert_eq!(b.next_lost(), Some(0));
        b.retransmit(0, SegInfo::default());
        assert_eq!((b.retrans_out(), b.in_flight()), (1, 5));
        assert_eq!(b.next_lost(), Some(1));
        b.check(true).unwrap();
    }

    #[test]
    fn overlapping_blocks_tag_each_segment_once_and_merge() {
        let mut b = board(12);
        assert_eq!(tag(&mut b, &ack(0, &[(2, 5)])), [2, 3, 4]);
        assert_eq!(tag(&mut b, &ack(0, &[(3, 7)])), [5, 6]);
        assert_eq!(tag(&mut b, &ack(0, &[(8, 9)])), [8]);
        assert_eq!(b.sacked_ranges, [(2, 7), (8, 9)]);
        // A block bridging the two ranges tags only the gap and leaves one range.
        assert_eq!(tag(&mut b, &ack(0, &[(1, 10)])), [1, 7, 9]);
        assert_eq!(b.sacked_ranges, [(1, 10)]);
        // Blocks below the cumulative ACK or beyond snd_nxt are clipped.
        assert_eq!(tag(&mut b, &ack(1, &[(0, 20)])), [10, 11]);
        assert_eq!(b.sacked_out(), 11);
        b.check(true).unwrap();
    }

    #[test]
    fn cumulative_ack_removes_segments_and_counts_only_unsacked_ones() {
        let mut b = board(8);
        tag(&mut b, &ack(0, &[(2, 4), (5, 6)]));
        b.mark_lost(0);
        b.retransmit(0, SegInfo::default());
        let mut removed = Vec::new();
        let acked = b.clean(4, &mut |info| removed.push(info.flags()));
        assert_eq!(acked, 2, "segments 0 and 1; 2 and 3 were SACKed before");
        assert_eq!(removed.len(), 4);
        assert_eq!(removed[0] & (LOST | RETRANS | EVER_RETRANS), LOST | RETRANS | EVER_RETRANS);
        assert_eq!((b.snd_una(), b.packets_out()), (4, 4));
        assert_eq!((b.sacked_out(), b.lost_out(), b.retrans_out()), (1, 0, 0));
        assert_eq!(b.sacked_ranges, [(5, 6)]);
        b.check(true).unwrap();
    }

    #[test]
    fn timeout_marks_every_unsacked_segment_and_undo_clears_the_marks() {
        let mut b = board(6);
        tag(&mut b, &ack(0, &[(4, 5)]));
        b.mark_lost(1);
        b.retransmit(1, SegInfo::default());
        b.mark_all_lost();
        assert_eq!((b.lost_out(), b.retrans_out(), b.sacked_out()), (5, 0, 1));
        assert_eq!(b.in_flight(), 0);
        // Go-back-N: retransmission restarts from the lowest segment.
        assert_eq!(b.next_lost(), Some(0));
        b.check(true).unwrap();
        b.clear_loss_marks();
        assert_eq!((b.lost_out(), b.retrans_out(), b.in_flight()), (0, 0, 5));
        assert_eq!(b.next_lost(), None);
        b.check(true).unwrap();
    }

    #[test]
    fn duplicate_acks_stand_in_for_sacks_without_sack() {
        let mut b = board(4);
        for _ in 0..6 {
            b.add_reno_sack();
        }
        assert_eq!(b.sacked_out(), 4, "never more than is outstanding");
        // An ACK for 3 segments: one filled the hole, two were counted as duplicates.
        b.clean(3, &mut |_| {});
        assert_eq!(b.remove_reno_sacks(3), 1);
        assert_eq!(b.sacked_out(), 2);
        b.limit_reno_sacked();
        assert_eq!(b.sacked_out(), 1, "limited to the one segment outstanding");
        b.reset_reno_sacks();
        assert_eq!(b.sacked_out(), 0);
    }

    #[test]
    fn a_record_keeps_every_field_at_its_limits() {
        let t = (1u64 << 56) - 1;
        let mut s = SegInfo::new(t, 0xff, u32::MAX, t - 7, t - 1_000_000_000_000_123);
        assert_eq!(
            (s.sent(), s.flags(), s.delivered, s.delivered_time()),
            (t, 0xff, u32::MAX, t - 7)
        );
        assert_eq!(s.send_elapsed_us(), 1_000_000_000_000);
        s.set_flags(SACKED);
        assert_eq!((s.sent(), s.flags(), s.delivered_time()), (t, SACKED, t - 7));
        assert_eq!(std::mem::size_of::<SegInfo>(), 24);
    }

    #[test]
    fn the_check_finds_a_counter_out_of_step() {
        let mut b = board(5);
        tag(&mut b, &ack(0, &[(1, 4)]));
        b.check(true).unwrap();
        b.lost_out += 1;
        assert_eq!(b.check(true).unwrap_err(), "lost_out 1 but 0 segments lost");
        b.lost_out -= 1;
        b.scan_sacked = 2;
        b.scan = 2;
        assert!(b.check(true).unwrap_err().starts_with("scan_sacked 2 but 1 SACKed"));
    }
}
