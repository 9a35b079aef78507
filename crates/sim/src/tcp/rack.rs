//! RACK loss detection (RFC 8985) as Linux 6.x runs it for SACK connections
//! (`net.ipv4.tcp_recovery = 1`, the default; net/ipv4/tcp_recovery.c). A segment is lost
//! once a segment *sent after it* has been delivered and it is still unacknowledged one
//! RACK RTT plus a reordering window after it was sent. Time, not the count of SACKed
//! segments above a hole (RFC 6675 DupThresh), decides, and it applies to
//! retransmissions as to originals: a lost retransmission is found as soon as something
//! sent after it is SACKed, where DupThresh could only wait for the RTO.
//!
//! - [`Rack::advance`] is `tcp_rack_advance`: every newly SACKed or cumulatively
//!   acknowledged segment (from `tcp_sacktag_one` and `tcp_clean_rtx_queue`) moves the
//!   reference to the most recently sent one delivered, and sets the RACK RTT.
//! - [`Rack::mark_lost`] is `tcp_rack_mark_lost` / `tcp_rack_detect_loss`, run from
//!   `tcp_fastretrans_alert` (`tcp_identify_packet_loss`) when the reference advanced;
//!   what is not yet overdue sets the reorder timer (`ICSK_TIME_REO_TIMEOUT`) to the
//!   longest wait, plus `TCP_TIMEOUT_MIN` (2 jiffies), at most the RTO.
//! - [`reo_wnd_us`] is `tcp_rack_reo_wnd`: min_rtt/4, at most srtt; zero while no
//!   reordering has been seen and the flow is in Recovery or Loss or has DupThresh
//!   segments SACKed (`sacked_out >= tp->reordering`).
//! - [`Rack::mark_lost_on_timeout`] is `tcp_timeout_mark_lost` with RACK: an RTO marks
//!   the head lost and every segment whose RACK timeout (without reordering window) has
//!   passed, not the segments sent within the last RACK RTT.
//!
//! Linux walks a list of segments in send order (`tsorted_sent_queue`); the scoreboard
//! here is in sequence order. Original transmissions are in send order already, so they
//! are walked from `head` (below which every segment is SACKed or marked lost) up to the
//! first sent after the reference; retransmissions in flight, sent later, lie below
//! `retrans_end` and are checked one by one. Both walks skip SACKed ranges, so an ACK
//! costs O(holes), not O(window).
//!
//! Not modelled: DSACK, so the window never widens (`tcp_rack_update_reo_wnd` keeps
//! `reo_wnd_steps` at 1); `tp->reordering` beyond its initial 3 (it only matters before
//! reordering is seen, and grows only when it is). The tail-loss probe is in `tlp.rs`.

use super::scoreboard::{Scoreboard, SegInfo, EVER_RETRANS, LOST, RETRANS};
use super::sender::TimerDeadline;
use super::TcpSender;
use cclab_cc::{CaState, LossRecovery};
use cclab_units::{Duration, Time};

/// Linux `TCP_TIMEOUT_MIN`: jiffies added to the reorder timer.
const TIMEOUT_MIN_JIFFIES: u64 = 2;

/// Linux's default `tp->reordering` (`sysctl_tcp_reordering`, RFC 6675 DupThresh).
const REORDERING: u32 = 3;

/// One flow's RACK state (Linux `struct tcp_rack` and `reord_seen`), with the two scan
/// bounds the sequence-ordered scoreboard needs.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rack {
    /// `rack.mstamp`: send time (us) of the most recently sent segment known delivered.
    xmit_us: u64,
    /// `rack.end_seq`, as that segment's number (breaks ties in send time).
    seq: u32,
    /// `rack.rtt_us`: the RTT of the last segment the reference was advanced with.
    rtt_us: u32,
    /// Every segment below `head` not SACKed is marked lost (the originals' scan starts
    /// here).
    head: u32,
    /// One past the highest segment retransmitted since none was in flight:
    /// retransmissions in flight lie below it.
    retrans_end: u32,
    /// Since none was in flight, segments were retransmitted in sequence order, so the
    /// retransmissions in flight were sent in sequence order too (false once one went
    /// below another, as a retransmission lost again and resent does).
    retrans_in_order: bool,
    /// `rack.advanced`: the reference moved since the last scan.
    advanced: bool,
    /// `tp->reord_seen`: a segment never retransmitted was delivered below one SACKed
    /// before it.
    reord_seen: bool,
}

/// What one ACK's newly delivered segments tell RACK, taken as the scoreboard walks them
/// (Linux `tcp_sacktag_one` and `tcp_clean_rtx_queue`).
pub(super) struct RackFeed<'a> {
    rack: &'a mut Rack,
    /// One past the highest segment SACKed before this ACK.
    prior_fack: Option<u32>,
    min_rtt_us: u32,
    /// The ACK's arrival time, us (converted once per ACK, not per segment).
    now_us: u64,
    /// The ACK's timestamp echo.
    tsecr: Time,
}

impl<'a> RackFeed<'a> {
    pub(super) fn new(
        rack: &'a mut Rack,
        prior_fack: Option<u32>,
        min_rtt_us: u32,
        now: Time,
        tsecr: Time,
    ) -> RackFeed<'a> {
        RackFeed { rack, prior_fack, min_rtt_us, now_us: now.as_micros(), tsecr }
    }

    /// Segment `seq`, recorded as `info` before this ACK, is newly SACKed.
    pub(super) fn newly_sacked(&mut self, seq: u32, info: &SegInfo) {
        self.rack.advance(info.flags(), seq, info.sent(), self.now_us, self.min_rtt_us);
        self.check_reordering(seq, info.flags());
    }

    /// Segment `seq`, not SACKed before, is cumulatively acknowledged. A retransmitted one
    /// whose ACK echoes a timestamp older than its retransmission was delivered by an
    /// earlier copy (`tcp_skb_spurious_retrans`) and does not move the reference.
    pub(super) fn cumulatively_acked(&mut self, seq: u32, info: &SegInfo) {
        let flags = info.flags();
        let spurious = flags & (RETRANS | EVER_RETRANS) != 0
            && self.tsecr > Time::ZERO
            && self.tsecr < Time(info.sent());
        if !spurious {
            self.rack.advance(flags, seq, info.sent(), self.now_us, self.min_rtt_us);
        }
        self.check_reordering(seq, flags);
    }

    /// `tcp_check_sack_reordering`: a segment never retransmitted delivered below the
    /// highest one SACKed before arrived out of order.
    fn check_reordering(&mut self, seq: u32, flags: u8) {
        if flags & EVER_RETRANS == 0 && self.prior_fack.is_some_and(|f| seq + 1 < f) {
            self.rack.reord_seen = true;
        }
    }
}

/// Linux `tcp_skb_sent_after`: (`t1`, `seq1`) was sent after (`t2`, `seq2`).
#[inline]
fn sent_after(t1: u64, seq1: u32, t2: u64, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// What [`reo_wnd_us`] needs to know of the flow.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReoInputs {
    /// In Recovery or Loss (`icsk_ca_state >= TCP_CA_Recovery`).
    pub(super) recovering: bool,
    pub(super) sacked_out: u32,
    /// `tcp_min_rtt` (`u32::MAX` before any sample) and srtt, us.
    pub(super) min_rtt_us: u32,
    pub(super) srtt_us: u32,
}

impl Rack {
    /// `tcp_rack_advance`: segment `seq`, last sent at `sent_ns` with `flags` as they were
    /// before this ACK, is newly delivered at `now_us`. A retransmitted segment delivered
    /// sooner than min RTT after its retransmission is ambiguous (the original may have
    /// arrived) and does not count.
    pub(super) fn advance(
        &mut self,
        flags: u8,
        seq: u32,
        sent_ns: u64,
        now_us: u64,
        min_rtt_us: u32,
    ) {
        let sent_us = sent_ns / 1000;
        let rtt_us = now_us.saturating_sub(sent_us).min(u32::MAX as u64) as u32;
        if rtt_us < min_rtt_us && flags & (RETRANS | EVER_RETRANS) != 0 {
            return;
        }
        self.advanced = true;
        self.rtt_us = rtt_us;
        if sent_after(sent_us, seq, self.xmit_us, self.seq) {
            self.xmit_us = sent_us;
            self.seq = seq;
        }
    }

    /// Segment `seq` is retransmitted, with `in_flight` retransmissions already out.
    #[inline]
    pub(super) fn on_retransmit(&mut self, seq: u32, in_flight: u32) {
        if in_flight == 0 {
            self.retrans_in_order = true;
            self.retrans_end = seq + 1;
            return;
        }
        if seq < self.retrans_end {
            self.retrans_in_order = false;
        }
        self.retrans_end = self.retrans_end.max(seq + 1);
    }

    /// Loss marks were cleared (a spurious reduction undone): every segment is to be
    /// judged again.
    pub(super) fn rescan(&mut self) {
        self.head = 0;
    }

    /// `tcp_rack_mark_lost`: if the reference advanced, marks what it shows lost.
    /// Returns how long to wait for the rest (None: nothing waits), which arms the reorder
    /// timer.
    pub(super) fn mark_lost(
        &mut self,
        board: &mut Scoreboard,
        now: Time,
        reo: ReoInputs,
        hz: u32,
    ) -> Option<Duration> {
        if !self.advanced {
            return None;
        }
        self.advanced = false;
        let wait_us = self.detect_loss(board, now, self.reo_wnd_us(reo));
        (wait_us > 0).then(|| reo_timer_delay(wait_us, hz))
    }

    /// `tcp_rack_reo_wnd`.
    pub(super) fn reo_wnd_us(&self, r: ReoInputs) -> u32 {
        if !self.reord_seen && (r.recovering || r.sacked_out >= REORDERING) {
            return 0;
        }
        (r.min_rtt_us >> 2).min(r.srtt_us)
    }

    /// `tcp_rack_detect_loss`: marks lost every segment sent before the reference and
    /// not delivered within RACK RTT + `reo_wnd_us` of its sending. Returns the longest
    /// time (us) one of the others has left (0: none waits).
    pub(super) fn detect_loss(
        &mut self,
        board: &mut Scoreboard,
        now: Time,
        reo_wnd_us: u32,
    ) -> u32 {
        let now_us = now.as_micros();
        let wait = self.scan_originals(board, now_us, reo_wnd_us);
        wait.max(self.scan_retransmissions(board, now_us, reo_wnd_us))
    }

    /// `tcp_rack_skb_timeout`: us left before a segment sent at `sent_ns` is overdue.
    #[inline]
    fn time_left(&self, sent_ns: u64, now_us: u64, reo_wnd_us: u32) -> i64 {
        self.rtt_us as i64 + reo_wnd_us as i64 - now_us.saturating_sub(sent_ns / 1000) as i64
    }

    /// The original transmissions not yet SACKed or marked lost, from `head` in sequence
    /// (= send) order up to the first sent after the reference. A segment retransmitted
    /// before and since cleared of its marks (an undone reduction) keeps its later send
    /// time: it does not end the walk.
    fn scan_originals(&mut self, board: &mut Scoreboard, now_us: u64, reo_wnd_us: u32) -> u32 {
        let mut wait = 0u32;
        let mut all_judged = true;
        self.head = self.head.max(board.snd_una());
        let mut p = board.skip_sacked(self.head);
        while p < board.snd_nxt() {
            let info = board.seg(p);
            let flags = info.flags();
            if flags & LOST == 0 {
                let sent_us = info.sent() / 1000;
                if sent_after(self.xmit_us, self.seq, sent_us, p) {
                    let left = self.time_left(info.sent(), now_us, reo_wnd_us);
                    if left <= 0 {
                        board.mark_lost(p);
                    } else {
                        wait = wait.max(left.min(u32::MAX as i64) as u32);
                        all_judged = false;
                    }
                } else if flags & EVER_RETRANS == 0 {
                    break;
                } else {
                    all_judged = false;
                }
            }
            if all_judged {
                self.head = p + 1;
            }
            p = board.skip_sacked(p + 1);
        }
        wait
    }

    /// The retransmissions in flight sent before the reference; an overdue one is lost
    /// again (`tcp_mark_skb_lost`: its retransmitted mark goes, so it is sent once more).
    /// While they were sent in sequence order the walk ends at the first one sent after
    /// the reference.
    fn scan_retransmissions(
        &mut self,
        board: &mut Scoreboard,
        now_us: u64,
        reo_wnd_us: u32,
    ) -> u32 {
        let mut wait = 0u32;
        if board.retrans_out() == 0 {
            return 0;
        }
        let end = self.retrans_end.min(board.snd_nxt());
        let mut p = board.skip_sacked(board.snd_una());
        while p < end {
            let info = board.seg(p);
            if info.flags() & RETRANS != 0 {
                if sent_after(self.xmit_us, self.seq, info.sent() / 1000, p) {
                    let left = self.time_left(info.sent(), now_us, reo_wnd_us);
                    if left <= 0 {
                        board.mark_retransmission_lost(p);
                    } else {
                        wait = wait.max(left.min(u32::MAX as i64) as u32);
                    }
                } else if self.retrans_in_order {
                    break;
                }
            }
            p = board.skip_sacked(p + 1);
        }
        wait
    }

    /// `tcp_timeout_mark_lost` with RACK (on an RTO): the head and every segment not
    /// SACKed whose RACK timeout without reordering window has passed are marked lost
    /// (a retransmission in flight among them is lost again); segments sent within the
    /// last RACK RTT are left to arrive. O(window), once per RTO.
    pub(super) fn mark_lost_on_timeout(&mut self, board: &mut Scoreboard, now: Time) {
        let now_us = now.as_micros();
        let una = board.snd_una();
        let mut p = board.skip_sacked(una);
        while p < board.snd_nxt() {
            let info = board.seg(p);
            if p == una || self.time_left(info.sent(), now_us, 0) <= 0 {
                if info.flags() & RETRANS != 0 {
                    board.mark_retransmission_lost(p);
                } else {
                    board.mark_lost(p);
                }
            }
            p = board.skip_sacked(p + 1);
        }
    }
}

impl TcpSender {
    /// RACK detects this flow's losses: SACK, unless switched off.
    #[inline]
    pub(super) fn rack_on(&self) -> bool {
        self.config().rack && self.rec.style() == LossRecovery::Sack
    }

    fn reo_inputs(&self) -> ReoInputs {
        ReoInputs {
            recovering: matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss),
            sacked_out: self.sacked_out(),
            min_rtt_us: self.tp.min_rtt_us,
            srtt_us: self.tp.srtt_us(),
        }
    }

    /// `tcp_identify_packet_loss` with RACK: marks what the ACK shows lost and, if
    /// something waits out the reordering window, arms the reorder timer in place of the
    /// RTO (`inet_csk_reset_xmit_timer(ICSK_TIME_REO_TIMEOUT)`, at most an RTO away).
    /// Returns whether it did.
    pub(super) fn rack_mark_lost(&mut self, now: Time) -> bool {
        let reo = self.reo_inputs();
        let Some(delay) = self.rack.mark_lost(&mut self.board, now, reo, self.tp.hz) else {
            return false;
        };
        self.timer = TimerDeadline::Reorder(now + delay.min(self.rto()));
        true
    }

    /// `tcp_rack_reo_timeout`: the reordering window has passed; what is overdue is lost.
    /// A new loss outside Recovery starts it (with PRR's first step,
    /// `tcp_cwnd_reduction(sk, 1, 0)`). Then the RTO takes the timer back. The caller
    /// then transmits (`tcp_xmit_retransmit_queue`).
    pub(super) fn on_reo_timeout(&mut self, now: Time) {
        self.sync_tp(now);
        let prior_in_flight = self.in_flight();
        let reo_wnd = self.rack.reo_wnd_us(self.reo_inputs());
        self.rack.detect_loss(&mut self.board, now, reo_wnd);
        if self.in_flight() != prior_in_flight && self.tp.ca_state != CaState::Recovery {
            self.enter_recovery(now);
            self.cwnd_reduction(1, 0, false);
        }
        self.rearm_rto(now);
        self.sync_tp(now);
    }
}

/// The reorder timer's delay for a wait of `wait_us`: Linux arms it for
/// `usecs_to_jiffies(wait) + TCP_TIMEOUT_MIN` jiffies (`tcp_rack_mark_lost`).
fn reo_timer_delay(wait_us: u32, hz: u32) -> Duration {
    let hz = hz.max(1) as u64;
    let jiffies = (wait_us as u64 * hz).div_ceil(1_000_000) + TIMEOUT_MIN_JIFFIES;
    Duration(jiffies * 1_000_000_000 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::{SegInfo, SACKED};
    use crate::tcp::Ack;

    const MS: u64 = 1_000_000;

    /// A scoreboard with segments `0..n` sent, segment `i` at `i` ms.
    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            let t = i as u64 * MS;
            b.push(SegInfo::new(t, 0, 0, t, t));
        }
        b
    }

    /// SACKs `blocks` at `now` and advances `rack` as the sender does.
    fn sack(b: &mut Scoreboard, rack: &mut Rack, blocks: &[(u32, u32)], now: Time) {
        let a = Ack::hand_made(b.snd_una(), blocks, Time::ZERO);
        b.tag_sacks(&a, &mut |seq, info| {
            rack.advance(info.flags(), seq, info.sent(), now.as_micros(), 50_000)
        });
    }

    fn open(sacked_out: u32) -> ReoInputs {
        ReoInputs { recovering: false, sacked_out, min_rtt_us: 40_000, srtt_us: 60_000 }
    }

    #[test]
    fn a_hole_is_lost_only_once_the_reordering_window_has_passed() {
        // 10 segments sent 1 ms apart; 2 is missing and 3 is SACKed 50 ms after it was
        // sent: RACK RTT 50 ms, window min_rtt/4 = 10 ms.
        let mut b = board(10);
        let mut rack = Rack::default();
        let now = Time(53 * MS);
        sack(&mut b, &mut rack, &[(3, 4)], now);
        let wait = rack.mark_lost(&mut b, now, open(1), 1000);
        // Segment 2 (and 0, 1) sent before 3: overdue at 2 + 50 + 10 = 62 ms; the longest
        // wait is segment 2's 9 ms, plus two jiffies.
        assert_eq!(b.lost_out(), 0);
        assert_eq!(wait, Some(Duration::from_millis(11)));
        assert_eq!(rack.detect_loss(&mut b, Time(61 * MS), 10_000), 1000);
        assert_eq!(b.lost_out(), 2, "0 and 1 overdue, 1 ms still left for segment 2");
        assert_eq!(rack.detect_loss(&mut b, Time(62 * MS), 10_000), 0);
        assert_eq!(b.lost_out(), 3, "segments 0, 1 and 2");
        assert_eq!(b.next_lost(), Some(0));
        b.check(true).unwrap();
    }

    #[test]
    fn with_dupthresh_segments_sacked_and_no_reordering_seen_the_window_is_zero() {
        let rack = Rack::default();
        assert_eq!(rack.reo_wnd_us(open(2)), 10_000);
        assert_eq!(rack.reo_wnd_us(open(3)), 0);
        assert_eq!(rack.reo_wnd_us(ReoInputs { recovering: true, ..open(0) }), 0);
        let seen = Rack { reord_seen: true, ..Rack::default() };
        assert_eq!(seen.reo_wnd_us(ReoInputs { recovering: true, ..open(5) }), 10_000);
        // At most srtt; before any RTT sample min_rtt is u32::MAX.
        let fresh = ReoInputs { min_rtt_us: u32::MAX, srtt_us: 0, ..open(0) };
        assert_eq!(seen.reo_wnd_us(fresh), 0);
    }

    #[test]
    fn segments_sent_after_the_reference_are_not_judged() {
        let mut b = board(10);
        let mut rack = Rack::default();
        sack(&mut b, &mut rack, &[(4, 5)], Time(500 * MS));
        rack.detect_loss(&mut b, Time(500 * MS), 0);
        // 0..4 sent before 4 are lost; 5..10 sent after it are not, however late.
        assert_eq!(b.lost_out(), 4);
        assert_eq!((0..10).filter(|&s| b.seg(s).flags() & LOST != 0).count(), 4);
        b.check(true).unwrap();
    }

    #[test]
    fn a_lost_retransmission_is_found_when_something_sent_after_it_is_sacked() {
        let mut b = board(10);
        let mut rack = Rack::default();
        sack(&mut b, &mut rack, &[(1, 4)], Time(60 * MS));
        rack.detect_loss(&mut b, Time(60 * MS), 0);
        assert_eq!(b.lost_out(), 1);
        // Segment 0 is retransmitted at 60 ms and lost again; 4..10 were sent before the
        // retransmission, so their SACKs say nothing about it...
        rack.on_retransmit(0, b.retrans_out());
        b.retransmit(0, SegInfo::new(60 * MS, 0, 0, 0, 0));
        sack(&mut b, &mut rack, &[(1, 10)], Time(70 * MS));
        rack.detect_loss(&mut b, Time(70 * MS), 0);
        assert_eq!((b.lost_out(), b.retrans_out()), (1, 1));
        // ... but new segment 10, sent at 61 ms and SACKed at 111 ms, does.
        b.push(SegInfo::new(61 * MS, 0, 0, 0, 0));
        sack(&mut b, &mut rack, &[(1, 11)], Time(111 * MS));
        rack.detect_loss(&mut b, Time(111 * MS), 0);
        assert_eq!((b.lost_out(), b.retrans_out()), (1, 0), "lost again, to be resent");
        assert_eq!(b.next_lost(), Some(0));
        b.check(true).unwrap();
    }

    #[test]
    fn an_ambiguous_retransmission_does_not_move_the_reference() {
        let mut rack = Rack::default();
        rack.advance(0, 3, 10 * MS, 60_000, 40_000);
        // A retransmission SACKed 5 ms after it was resent: less than min RTT, so the
        // original may have been what arrived.
        rack.advance(RETRANS | EVER_RETRANS, 1, 70 * MS, 75_000, 40_000);
        assert_eq!((rack.xmit_us, rack.seq, rack.rtt_us), (10_000, 3, 50_000));
        rack.advance(RETRANS | EVER_RETRANS, 1, 70 * MS, 115_000, 40_000);
        assert_eq!((rack.xmit_us, rack.seq, rack.rtt_us), (70_000, 1, 45_000));
    }

    #[test]
    fn a_timeout_leaves_segments_sent_within_the_last_rack_rtt() {
        let mut b = board(10);
        let mut rack = Rack::default();
        sack(&mut b, &mut rack, &[(2, 3)], Time(52 * MS));
        // RTO at 57 ms: RACK RTT 50 ms, so 0..=7 (sent by 7 ms) are overdue; 8 and 9 are
        // not and stay in flight. The head is always marked.
        rack.mark_lost_on_timeout(&mut b, Time(57 * MS));
        assert_eq!(b.lost_out(), 7);
        assert_eq!(b.seg(8).flags() & LOST, 0);
        assert_eq!(b.seg(2).flags(), SACKED);
        b.check(true).unwrap();
    }

    #[test]
    fn the_reorder_timer_rounds_up_to_jiffies_and_adds_two() {
        assert_eq!(reo_timer_delay(1, 1000), Duration::from_millis(3));
        assert_eq!(reo_timer_delay(9_000, 1000), Duration::from_millis(11));
        assert_eq!(reo_timer_delay(9_000, 250), Duration::from_millis(12 + 8));
    }
}
