//! Loss recovery: the state machine of Linux's `tcp_fastretrans_alert` (net/ipv4/
//! tcp_input.c), reduced to what this model needs, with its three styles:
//!
//! - SACK: a segment is lost once DupThresh = 3 segments above it are SACKed (RFC 6675
//!   `IsLost`, see the scoreboard); fast recovery with PRR (RFC 6937, as
//!   `tcp_cwnd_reduction` does it); on leaving Recovery cwnd = ssthresh
//!   (`tcp_end_cwnd_reduction`).
//! - NewReno (RFC 6582; Linux without SACK): duplicate ACKs counted as Linux's
//!   `tcp_add_reno_sack` does, the head retransmitted on entering recovery and after each
//!   partial ACK, recovery until an ACK goes past `high_seq` (one that reaches it
//!   exactly holds the state, as it does Loss, so that duplicate ACKs for data resent
//!   although it had arrived cannot start a false fast retransmit).
//! - Tahoe: on the third duplicate ACK, ssthresh from the algorithm, cwnd = 1, every
//!   outstanding segment marked lost (go-back-N) and slow start; no fast recovery.
//!
//! On RTO, `tcp_enter_loss`: ssthresh from the algorithm, `CaEvent::Loss`, every
//! un-SACKed segment marked lost, cwnd = in_flight + 1 (= 1), go-back-N.
//!
//! Undo (Eifel-like, RFC 3522 with timestamps as `tcp_packet_delayed`): if the ACK that
//! ends Recovery or Loss echoes a timestamp older than our first retransmission, the
//! original arrived and the reduction was spurious: `undo_cwnd` restores cwnd.

use super::scoreboard::{DUPTHRESH, EVER_RETRANS};
use super::TcpSender;
use cclab_cc::{
    tcp::INFINITE_SSTHRESH, CaEvent, CaState, CongestionControl, LossRecovery, TcpState,
};
use cclab_units::Time;

/// The recovery state of one sender.
#[derive(Clone, Debug)]
pub(super) struct Recovery {
    style: LossRecovery,
    /// Recovery point (Linux `high_seq`): Recovery or Loss ends once it is acknowledged.
    high_seq: u32,
    /// Duplicate ACKs (NewReno/Tahoe).
    dupacks: u32,
    prr: Prr,
    undo: Undo,
}

impl Recovery {
    pub(super) fn new(style: LossRecovery) -> Recovery {
        Recovery { style, high_seq: 0, dupacks: 0, prr: Prr::default(), undo: Undo::default() }
    }

    #[inline]
    pub(super) fn style(&self) -> LossRecovery {
        self.style
    }

    /// A segment was sent in CA state `state` (PRR counts what is sent while reducing).
    #[inline]
    pub(super) fn on_sent(&mut self, state: CaState) {
        if matches!(state, CaState::Recovery | CaState::Cwr) {
            self.prr.out += 1;
        }
    }

    /// A segment was retransmitted at `now`.
    #[inline]
    pub(super) fn on_retransmit(&mut self, now: Time) {
        if self.undo.retrans_stamp.is_none() {
            self.undo.retrans_stamp = Some(now);
        }
    }
}

/// Proportional Rate Reduction (RFC 6937) as Linux's `tcp_cwnd_reduction` does it.
#[derive(Clone, Copy, Debug, Default)]
struct Prr {
    /// Segments delivered and sent since the reduction began.
    delivered: u32,
    out: u32,
}

impl Prr {
    /// The window after an ACK that newly delivered `newly_acked_sacked` segments and
    /// newly marked `newly_lost` lost, with `in_flight` outstanding: sends in proportion
    /// to deliveries while in flight exceeds ssthresh (spreading the reduction over a
    /// round trip), then slow-start-like up to ssthresh. None when the ACK delivered
    /// nothing (or no reduction is under way).
    fn cwnd(
        &mut self,
        tp: &TcpState,
        in_flight: u32,
        newly_acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
    ) -> Option<u32> {
        if newly_acked_sacked == 0 || tp.prior_cwnd == 0 {
            return None;
        }
        self.delivered += newly_acked_sacked;
        let in_flight = in_flight as i64;
        let ssthresh = tp.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        let prr_out = self.out as i64;
        let mut sndcnt = if delta < 0 {
            let dividend = ssthresh * self.delivered as i64 + tp.prior_cwnd as i64 - 1;
            dividend / tp.prior_cwnd as i64 - prr_out
        } else {
            let mut s = (self.delivered as i64 - prr_out).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        Some((in_flight + sndcnt).clamp(1, u32::MAX as i64) as u32)
    }
}

/// What undoing a window reduction needs (Linux `tcp_init_undo`, `undo_marker`,
/// `retrans_stamp`).
#[derive(Clone, Copy, Debug, Default)]
struct Undo {
    /// ssthresh before the reduction.
    prior_ssthresh: u32,
    /// A reduction that may still be undone is under way.
    marker: bool,
    /// When the first retransmission of this episode was sent.
    retrans_stamp: Option<Time>,
}

impl Undo {
    /// Linux `tcp_packet_delayed` with timestamps: the ACK echoes `tsecr`, older than the
    /// first retransmission, so an original was delivered. Ends the chance to undo.
    fn was_spurious(&mut self, tsecr: Time) -> bool {
        let spurious = match self.retrans_stamp {
            Some(rs) => self.marker && tsecr < rs && tsecr > Time::ZERO,
            None => false,
        };
        self.marker = false;
        spurious
    }
}

impl TcpSender {
    /// Linux `tcp_fastretrans_alert`, reduced to what this model needs (`dubious`: the ACK
    /// is one Linux would call it for). Returns whether RACK armed its reorder timer
    /// (then the RTO is not rearmed).
    ///
    /// Inlined, so that the common ACK (see [`nothing_to_recover`](Self::nothing_to_recover))
    /// costs no call.
    #[inline]
    pub(super) fn fastretrans_alert(
        &mut self,
        now: Time,
        advanced: bool,
        dubious: bool,
        tsecr: Time,
    ) -> bool {
        if !dubious && self.nothing_to_recover() {
            return false;
        }
        self.run_recovery(now, advanced, dubious, tsecr)
    }

    /// The steps of [`fastretrans_alert`](Self::fastretrans_alert).
    #[inline(never)]
    fn run_recovery(&mut self, now: Time, advanced: bool, dubious: bool, tsecr: Time) -> bool {
        if self.end_recovery_if_done(now, advanced, tsecr) {
            return false;
        }
        let prior_retrans = self.retrans_out();
        let reo_armed = self.mark_losses(now, advanced, dubious);
        // In Loss, a retransmission found lost (by RACK) starts Recovery as a new loss
        // would (the Loss case's fall-through to `tcp_time_to_recover`).
        let lost_retrans = self.retrans_out() < prior_retrans;
        let state = self.tp.ca_state;
        if (matches!(state, CaState::Open | CaState::Disorder)
            || (state == CaState::Loss && lost_retrans))
            && self.packets_out() > 0
        {
            self.open_or_disorder(now);
        }
        if self.rec.style != LossRecovery::Sack {
            self.board.limit_reno_sacked();
        }
        reo_armed
    }

    /// Open, with nothing SACKed, lost or counted as a duplicate ACK. Linux calls
    /// `tcp_fastretrans_alert` only for a dubious ACK (`tcp_ack_is_dubious`); an ACK that
    /// is not dubious (it advanced `snd_una`, SACKed nothing, in Open) finding this state
    /// would change nothing in any step of it, so the common in-order ACK skips it whole.
    #[inline]
    fn nothing_to_recover(&self) -> bool {
        self.tp.ca_state == CaState::Open
            && self.sacked_out() == 0
            && self.lost_out() == 0
            && self.rec.dupacks == 0
    }

    /// Leaves Recovery / Loss once everything outstanding at its start is acknowledged,
    /// undoing the reduction if it was spurious.
    ///
    /// Linux holds some states until an ACK goes past `high_seq`, not just to it
    /// (`tcp_fastretrans_alert`, `tcp_try_undo_recovery`): CWR, so that the CWR bit
    /// reaches the receiver; and, without SACK, Recovery and Loss, against false fast
    /// retransmits (RFC 2582): duplicate ACKs for segments sent before `high_seq` (a
    /// retransmission whose original also arrived) would otherwise count toward a new
    /// recovery.
    /// Returns whether a state was held (Linux then does nothing more for this ACK).
    fn end_recovery_if_done(&mut self, now: Time, advanced: bool, tsecr: Time) -> bool {
        let done = self.snd_una() >= self.rec.high_seq;
        let past = self.snd_una() > self.rec.high_seq;
        let reno_holds = !past && self.rec.style != LossRecovery::Sack;
        let state = self.tp.ca_state;
        match state {
            CaState::Cwr if past => {
                self.end_cwnd_reduction();
                self.leave_for_open();
            }
            CaState::Recovery if done => {
                let undone = self.try_undo(now, tsecr);
                if reno_holds {
                    return self.hold_state_at_high_seq();
                }
                if !undone {
                    self.end_cwnd_reduction();
                }
                self.leave_for_open();
            }
            CaState::Loss if done => {
                self.try_undo(now, tsecr);
                if reno_holds {
                    return self.hold_state_at_high_seq();
                }
                self.leave_for_open();
            }
            // tcp_try_undo_loss: an ACK for data sent before the timeout.
            CaState::Loss if advanced && self.rec.undo.marker && self.try_undo(now, tsecr) => {
                self.set_state(CaState::Open);
            }
            _ => {}
        }
        false
    }

    fn leave_for_open(&mut self) {
        self.set_state(CaState::Open);
        self.rec.undo.retrans_stamp = None;
    }

    /// Without SACK, at `high_seq` exactly: the state stays until an ACK goes past it,
    /// with no duplicate ACK counted (`tcp_reset_reno_sack`), and the first
    /// retransmission's time is forgotten once nothing retransmitted is left. Returns
    /// true (the state was held).
    fn hold_state_at_high_seq(&mut self) -> bool {
        self.board.reset_reno_sacks();
        self.rec.dupacks = 0;
        if !self.any_retrans_done() {
            self.rec.undo.retrans_stamp = None;
        }
        true
    }

    /// Linux `tcp_any_retrans_done`: a retransmission is out, or the oldest outstanding
    /// segment was ever resent.
    fn any_retrans_done(&self) -> bool {
        self.retrans_out() > 0
            || (self.packets_out() > 0
                && self.board.seg(self.snd_una()).flags() & EVER_RETRANS != 0)
    }

    /// Marks what this ACK shows lost: RACK (or RFC 6675 if it is off) with SACK; with
    /// NewReno, the next hole after a partial ACK (RFC 6582: retransmit it at once).
    /// Returns whether RACK armed its reorder timer.
    fn mark_losses(&mut self, now: Time, advanced: bool, dubious: bool) -> bool {
        match self.rec.style {
            LossRecovery::Sack if self.rack_on() => return dubious && self.rack_mark_lost(now),
            LossRecovery::Sack => {
                if self.sacked_out() > 0 {
                    self.board.mark_lost_by_sacks();
                }
            }
            LossRecovery::NewReno => {
                if self.tp.ca_state == CaState::Recovery && advanced && self.packets_out() > 0 {
                    self.board.mark_lost(self.snd_una());
                }
            }
            LossRecovery::Tahoe => {}
        }
        false
    }

    /// In Open or Disorder with data outstanding: enter recovery on a loss, else Disorder
    /// while SACKs or duplicate ACKs show reordering, else Open.
    fn open_or_disorder(&mut self, now: Time) {
        let time_to_recover = match self.rec.style {
            LossRecovery::Sack => self.lost_out() > 0,
            _ => self.rec.dupacks >= DUPTHRESH,
        };
        if time_to_recover {
            match self.rec.style {
                LossRecovery::Tahoe => self.enter_tahoe_loss(now),
                _ => self.enter_recovery(now),
            }
        } else if self.sacked_out() > 0 || self.rec.dupacks > 0 {
            if self.tp.ca_state != CaState::Disorder {
                self.set_state(CaState::Disorder);
            }
        } else if self.tp.ca_state != CaState::Open {
            self.set_state(CaState::Open);
        }
    }

    /// Without SACK, counts duplicate ACKs as Linux's `tcp_add_reno_sack` /
    /// `tcp_remove_reno_sacks` do. Returns the segments the ACK delivers (`acked` cumulatively
    /// and `newly_sacked`, with duplicate ACKs standing in for SACKs without SACK).
    pub(super) fn count_delivered(&mut self, acked: u32, newly_sacked: u32, advanced: bool) -> u32 {
        let delivered = acked + newly_sacked;
        if self.rec.style == LossRecovery::Sack {
            return delivered;
        }
        // Not in Loss, nor in Recovery held at high_seq (which counts none).
        let counting = match self.tp.ca_state {
            CaState::Loss => false,
            CaState::Recovery => self.snd_una() < self.rec.high_seq,
            _ => true,
        };
        if !advanced && self.packets_out() > 0 && counting {
            self.rec.dupacks += 1;
            self.board.add_reno_sack();
        }
        if advanced {
            // One ACK filled a hole; the rest were counted as duplicate ACKs.
            self.rec.dupacks = 0;
            self.board.remove_reno_sacks(acked)
        } else if self.rec.dupacks > 0 && self.packets_out() > 0 {
            1
        } else {
            delivered
        }
    }

    pub(super) fn set_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.ca.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// Linux `tcp_current_ssthresh`.
    pub(super) fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        }
    }

    /// tcp_init_undo + remembering the window before a reduction.
    fn init_undo(&mut self) {
        self.rec.undo =
            Undo { prior_ssthresh: self.current_ssthresh(), marker: true, retrans_stamp: None };
        self.tp.prior_cwnd = self.tp.snd_cwnd;
    }

    /// ssthresh from the algorithm (at least 2), as every reduction sets it.
    fn reduce_ssthresh(&mut self, now: Time) {
        self.sync_tp(now);
        self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp).max(2);
    }

    /// Linux `tcp_enter_recovery`.
    pub(super) fn enter_recovery(&mut self, now: Time) {
        self.stats.fast_recoveries += 1;
        self.init_undo();
        self.init_cwnd_reduction(now);
        if self.rec.style == LossRecovery::NewReno {
            self.board.mark_lost(self.snd_una());
        }
        self.set_state(CaState::Recovery);
    }

    /// Linux `tcp_init_cwnd_reduction`: a window reduction (Recovery or CWR) starts; it
    /// ends once what is now outstanding is acknowledged, and ends a tail-loss probe
    /// episode.
    pub(super) fn init_cwnd_reduction(&mut self, now: Time) {
        self.rec.high_seq = self.snd_nxt();
        self.tlp.end_episode();
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.rec.prr = Prr::default();
        self.reduce_ssthresh(now);
        self.tp.snd_cwnd_cnt = 0;
    }

    /// Linux `tcp_end_cwnd_reduction`: cwnd to ssthresh, then tell the algorithm
    /// (Westwood+ sets its window from the bandwidth estimate here).
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.tp.snd_ssthresh < INFINITE_SSTHRESH {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
            self.tp.snd_cwnd_cnt = 0;
        }
        self.ca.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// Linux `tcp_try_keep_open`: Open, or Disorder while segments are SACKed, lost or
    /// retransmitted (`tcp_any_retrans_done`: also when the head was ever resent).
    pub(super) fn try_keep_open(&mut self) {
        let disorder = self.sacked_out() + self.lost_out() > 0 || self.any_retrans_done();
        let state = if disorder { CaState::Disorder } else { CaState::Open };
        if self.tp.ca_state != state {
            self.set_state(state);
            self.rec.high_seq = self.snd_nxt();
        }
    }

    /// Tahoe's response to three duplicate ACKs: as an RTO without the timer.
    fn enter_tahoe_loss(&mut self, now: Time) {
        self.stats.fast_recoveries += 1;
        self.init_undo();
        self.rec.undo.marker = false;
        self.reduce_ssthresh(now);
        self.board.mark_all_lost();
        self.board.reset_reno_sacks();
        self.rec.dupacks = 0;
        self.tp.snd_cwnd = 1;
        self.tp.snd_cwnd_cnt = 0;
        self.rec.high_seq = self.snd_nxt();
        self.set_state(CaState::Loss);
    }

    /// Linux `tcp_enter_loss` after a timeout (`first_rto`: the first since `snd_una`
    /// last advanced): every un-SACKed segment lost (with RACK, those not sent within the
    /// last RACK RTT), ssthresh reduced unless this episode already did, cwnd =
    /// in_flight + 1.
    pub(super) fn enter_loss(&mut self, now: Time, first_rto: bool) {
        if self.rack_on() {
            self.rack.mark_lost_on_timeout(&mut self.board, now);
        } else {
            self.board.mark_all_lost();
        }
        if self.rec.style != LossRecovery::Sack {
            self.board.reset_reno_sacks();
            self.rec.dupacks = 0;
        }
        if matches!(self.tp.ca_state, CaState::Open | CaState::Disorder)
            || self.snd_una() >= self.rec.high_seq
            || (self.tp.ca_state == CaState::Loss && first_rto)
        {
            self.init_undo();
            self.reduce_ssthresh(now);
            self.ca.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.tp.snd_cwnd = self.in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.rec.high_seq = self.snd_nxt();
        self.set_state(CaState::Loss);
        self.rec.undo.retrans_stamp = None;
    }

    /// Eifel-style undo with timestamps (Linux `tcp_packet_delayed` +
    /// `tcp_undo_cwnd_reduction`). Returns whether the reduction was undone.
    fn try_undo(&mut self, now: Time, tsecr: Time) -> bool {
        if !self.rec.undo.was_spurious(tsecr) {
            return false;
        }
        self.sync_tp(now);
        let cwnd = self.ca.undo_cwnd(&mut self.tp);
        self.tp.snd_cwnd = cwnd.max(1);
        if self.rec.undo.prior_ssthresh > self.tp.snd_ssthresh {
            self.tp.snd_ssthresh = self.rec.undo.prior_ssthresh;
        }
        // Nothing was really lost: forget the loss marks (go-back-N would resend data
        // the receiver has).
        self.board.clear_loss_marks();
        self.rack.rescan();
        self.stats.undos += 1;
        true
    }

    /// Linux `tcp_cwnd_reduction`: the PRR window for this ACK.
    pub(super) fn cwnd_reduction(
        &mut self,
        newly_acked_sacked: u32,
        newly_lost: u32,
        advanced: bool,
    ) {
        let in_flight = self.in_flight();
        if let Some(cwnd) =
            self.rec.prr.cwnd(&self.tp, in_flight, newly_acked_sacked, newly_lost, advanced)
        {
            self.tp.snd_cwnd = cwnd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::tcp::Ack;
    use cclab_cc::Algorithm;

    const MS: u64 = 1_000_000;

    fn reducing(prior_cwnd: u32, ssthresh: u32) -> TcpState {
        let mut tp = TcpState::new(1448, 10);
        tp.prior_cwnd = prior_cwnd;
        tp.snd_ssthresh = ssthresh;
        tp
    }

    #[test]
    fn prr_sends_one_segment_per_two_delivered_when_halving() {
        // RFC 6937: cwnd 20 halved to ssthresh 10, one segment lost (19 in flight). Each
        // ACK delivers one segment; PRR sends ceil(delivered * 10 / 20) in all.
        let tp = reducing(20, 10);
        let mut prr = Prr::default();
        let (mut in_flight, mut sent) = (19, 0);
        for k in 1..=18u32 {
            in_flight -= 1;
            let cwnd = prr.cwnd(&tp, in_flight, 1, 0, false).unwrap();
            let now_sent = cwnd.saturating_sub(in_flight);
            prr.out += now_sent;
            sent += now_sent;
            in_flight += now_sent;
            if k <= 16 {
                assert_eq!(sent, k.div_ceil(2), "after {k} ACKs");
            }
        }
        assert_eq!((sent, in_flight), (9, 10), "in flight ends at ssthresh");
    }

    #[test]
    fn prr_grows_back_to_ssthresh_but_not_beyond_after_heavy_loss() {
        let tp = reducing(20, 10);
        let mut prr = Prr { delivered: 0, out: 1 };
        // 4 in flight, well below ssthresh: send what was delivered, plus one on an ACK
        // that advanced snd_una without new losses.
        assert_eq!(prr.cwnd(&tp, 4, 2, 0, true), Some(4 + 3));
        prr.out += 3;
        assert_eq!(prr.cwnd(&tp, 8, 5, 0, true), Some(10), "capped at ssthresh");
        // A new loss takes away the extra segment.
        let mut prr = Prr { delivered: 0, out: 1 };
        assert_eq!(prr.cwnd(&tp, 4, 2, 1, true), Some(4 + 2));
    }

    #[test]
    fn prr_forces_the_first_retransmission_and_ignores_empty_acks() {
        let tp = reducing(20, 10);
        let mut prr = Prr::default();
        assert_eq!(prr.cwnd(&tp, 19, 0, 0, false), None, "nothing delivered");
        assert_eq!(prr.delivered, 0);
        // Far above ssthresh, one delivery is worth half a segment, rounded up: the fast
        // retransmit goes out at once.
        assert_eq!(prr.cwnd(&tp, 30, 1, 0, false), Some(31));
        assert_eq!(prr.cwnd(&reducing(0, 10), 19, 1, 0, false), None, "no reduction");
    }

    #[test]
    fn undo_needs_an_echo_older_than_the_first_retransmission_once() {
        let armed = Undo { prior_ssthresh: 20, marker: true, retrans_stamp: Some(Time(100 * MS)) };
        assert!(armed.clone().was_spurious(Time(90 * MS)));
        assert!(!armed.clone().was_spurious(Time(100 * MS)), "echoes the retransmission");
        assert!(!armed.clone().was_spurious(Time::ZERO), "no timestamp echoed");
        assert!(!Undo { retrans_stamp: None, ..armed }.was_spurious(Time(90 * MS)));
        let mut once = armed;
        assert!(once.was_spurious(Time(90 * MS)));
        assert!(!once.was_spurious(Time(90 * MS)), "the chance is used up");
    }

    fn sender(recovery: LossRecovery) -> TcpSender {
        let cfg = TcpConfig { init_cwnd: 10, recovery: Some(recovery), ..Default::default() };
        let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, None);
        s.start(Time(MS));
        assert_eq!(s.transmit(Time(MS), &mut |_| {}), 10);
        s
    }

    fn ack(cum: u32, blocks: &[(u32, u32)], tsecr: Time) -> Ack {
        Ack::hand_made(cum, blocks, tsecr)
    }

    fn sent_by(s: &mut TcpSender, now: Time) -> Vec<u32> {
        let mut seqs = Vec::new();
        s.transmit(now, &mut |seg| seqs.push(seg.seq));
        seqs
    }

    #[test]
    fn sack_recovery_ends_at_ssthresh_or_is_undone_when_the_original_arrived() {
        for (echo, undone) in [(Time(150 * MS), false), (Time(MS), true)] {
            let mut s = sender(LossRecovery::Sack);
            // Segment 0 is missing and three above it are SACKed: it is lost.
            s.on_ack(Time(100 * MS), &ack(0, &[(1, 4)], Time(MS)));
            assert_eq!(s.tp().ca_state, CaState::Recovery);
            assert_eq!((s.tp().snd_ssthresh, s.tp().prior_cwnd), (5, 10));
            assert_eq!(sent_by(&mut s, Time(100 * MS))[0], 0, "the hole goes first");
            // Everything acknowledged; the ACK echoes the retransmission's timestamp, or
            // the original's (it was only delayed).
            s.on_ack(Time(200 * MS), &ack(s.snd_nxt(), &[], echo));
            assert_eq!(s.tp().ca_state, CaState::Open);
            assert_eq!(s.stats().undos, undone as u64);
            // The same ACK then grows the window (8 segments newly acknowledged: 0 and
            // 4..=10). Without undo: cwnd = ssthresh = 5, then congestion avoidance adds
            // one. With undo: ssthresh and cwnd as before recovery, then slow start.
            let (cwnd, ssthresh) = if undone { (10 + 8, INFINITE_SSTHRESH) } else { (5 + 1, 5) };
            assert_eq!((s.tp().snd_cwnd, s.tp().snd_ssthresh), (cwnd, ssthresh));
            s.check_invariants().unwrap();
        }
    }

    #[test]
    fn newreno_counts_duplicate_acks_and_enters_recovery_on_the_third() {
        let mut s = sender(LossRecovery::NewReno);
        for n in 1..=3 {
            s.on_ack(Time((100 + n) * MS), &ack(0, &[], Time(MS)));
            assert_eq!((s.rec.dupacks, s.sacked_out()), (n as u32, n as u32));
            assert_eq!(s.tp().delivered, n as u32, "each duplicate ACK delivers one");
        }
        assert_eq!(s.tp().ca_state, CaState::Recovery);
        assert_eq!(s.lost_out(), 1, "the head is marked lost at once");
        assert_eq!(sent_by(&mut s, Time(104 * MS))[0], 0);
        // A partial ACK (up to 5) counts one delivery per new segment, less the three
        // already counted, and marks the next hole lost.
        s.on_ack(Time(200 * MS), &ack(5, &[], Time(MS)));
        assert_eq!(s.tp().delivered, 3 + 2);
        assert_eq!((s.rec.dupacks, s.tp().ca_state, s.lost_out()), (0, CaState::Recovery, 1));
        s.check_invariants().unwrap();
    }

    #[test]
    fn without_sack_recovery_holds_until_an_ack_goes_past_high_seq() {
        // NewReno, 10 segments out, segment 0 lost: recovery on the third duplicate ACK
        // (high_seq 10), the hole resent, and new data sent beyond high_seq.
        let mut s = sender(LossRecovery::NewReno);
        for n in 1..=3 {
            s.on_ack(Time((100 + n) * MS), &ack(0, &[], Time(MS)));
        }
        assert_eq!(sent_by(&mut s, Time(104 * MS))[0], 0);
        assert_eq!(s.rec.high_seq, 10);
        // More duplicate ACKs: PRR clocks out new data, beyond high_seq.
        for n in 4..=8 {
            s.on_ack(Time((100 + n) * MS), &ack(0, &[], Time(MS)));
            sent_by(&mut s, Time((100 + n) * MS));
        }
        assert!(s.snd_nxt() > 10, "snd_nxt {}", s.snd_nxt());
        // The retransmission fills the hole: the ACK reaches high_seq exactly. Linux
        // stays in Recovery (`tcp_try_undo_recovery`), and the duplicate ACKs that
        // follow (say, from segments resent although their originals arrived) cannot
        // start a false fast retransmit.
        s.on_ack(Time(150 * MS), &ack(10, &[], Time(104 * MS)));
        assert_eq!(s.tp().ca_state, CaState::Recovery);
        for n in 1..=3 {
            s.on_ack(Time((150 + n) * MS), &ack(10, &[], Time(104 * MS)));
        }
        assert_eq!((s.tp().ca_state, s.stats().fast_recoveries), (CaState::Recovery, 1));
        // An ACK beyond high_seq ends it.
        s.on_ack(Time(160 * MS), &ack(11, &[], Time(108 * MS)));
        assert_eq!(s.tp().ca_state, CaState::Open);
        s.check_invariants().unwrap();
    }

    #[test]
    fn tahoe_goes_back_to_one_segment_on_the_third_duplicate_ack() {
        let mut s = sender(LossRecovery::Tahoe);
        for n in 1..=3 {
            s.on_ack(Time((100 + n) * MS), &ack(0, &[], Time(MS)));
        }
        assert_eq!(s.tp().ca_state, CaState::Loss);
        assert_eq!((s.tp().snd_cwnd, s.tp().snd_ssthresh), (1, 5));
        assert_eq!((s.lost_out(), s.sacked_out()), (10, 0), "go-back-N");
        assert_eq!(sent_by(&mut s, Time(104 * MS)), [0]);
    }
}
