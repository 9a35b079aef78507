//! The TCP sender, following Linux (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c,
//! tcp_rate.c) where congestion control can see the difference:
//!
//! - ACK processing in `tcp_ack()`'s order: SACK tagging, cumulative ACK
//!   (`tcp_clean_rtx_queue`: RTT sample, `pkts_acked`), `in_ack_event` (after the
//!   cleanup, as the trait documents and current kernels do), loss detection and the
//!   recovery state machine (`tcp_fastretrans_alert`), the delivery-rate sample
//!   (`tcp_rate_gen`), then `cong_control`, or PRR (`tcp_cwnd_reduction`) while in
//!   Recovery, or `cong_avoid` when cwnd may grow (`tcp_cong_control`).
//! - Loss detection with SACK: a segment is lost once `DupThresh` = 3 segments above it
//!   are SACKed (RFC 6675 `IsLost`, Linux `tcp_mark_head_lost` with reordering 3). The
//!   scan is incremental: a pointer walks the scoreboard once, so an ACK costs O(newly
//!   acknowledged) in the common case, never O(window). No RACK and no tail-loss probe:
//!   a lost retransmission or a tail loss waits for the RTO.
//! - Fast recovery with PRR (RFC 6937 as `tcp_cwnd_reduction` does it); on leaving
//!   Recovery cwnd = ssthresh (`tcp_end_cwnd_reduction`).
//! - NewReno (RFC 6582; Linux without SACK): SACK blocks ignored, duplicate ACKs counted
//!   as Linux's `tcp_add_reno_sack` does, the head retransmitted on entering recovery and
//!   after each partial ACK, recovery until `high_seq` is acknowledged.
//! - Tahoe: on the third duplicate ACK, ssthresh from the algorithm, cwnd = 1, every
//!   outstanding segment marked lost (go-back-N) and slow start; no fast recovery.
//! - RTO per RFC 6298 computed as Linux's `tcp_rtt_estimator`/`__tcp_set_rto` (srtt and
//!   mdev in microseconds, `rto_min` entering through rttvar, so RTO >= srtt + rto_min),
//!   exponential backoff up to `rto_max`, backoff cleared by a valid RTT sample. On RTO,
//!   `tcp_enter_loss`: ssthresh from the algorithm, `CaEvent::Loss`, every un-SACKed
//!   segment marked lost, cwnd = in_flight + 1 (= 1), go-back-N.
//! - RTT samples as `tcp_clean_rtx_queue`/`tcp_ack_update_rtt` take them, in every
//!   recovery mode: from the oldest cumulatively acknowledged segment unless the ACK also
//!   covers retransmitted data (Karn; `FLAG_RETRANS_DATA_ACKED`), else from the lowest
//!   newly SACKed never-retransmitted segment, else from the echoed timestamp. The newest
//!   segment's sample (`ca_rtt_us`) feeds min RTT, `pkts_acked`, the rate sample and the
//!   RTT statistics.
//! - Undo (Eifel-like, RFC 3522 with timestamps as `tcp_packet_delayed`): if the ACK that
//!   ends Recovery or Loss echoes a timestamp older than our first retransmission, the
//!   original arrived and the reduction was spurious: `undo_cwnd` restores cwnd.
//! - Idle restart (`tcp_cwnd_restart`, RFC 2861-like): after an idle period longer than
//!   the RTO, cwnd restarts at min(cwnd, initcwnd), halved per idle RTO.
//!
//! Differences from Linux worth knowing: time is kept in nanoseconds (no jiffies
//! rounding of the RTO; timestamps tick in microseconds, as with Linux's usec TS option),
//! no pacing, no TSO (every segment is one MSS), min RTT is the minimum over a 10 s
//! window with a single stored sample (restarted when it expires).

use super::{Ack, Segment};
use crate::config::TcpConfig;
use crate::hist::Histogram;
use crate::output::FlowSample;
use cclab_cc::{
    tcp::INFINITE_SSTHRESH, AckFlags, AckSample, Algorithm, CaEvent, CaState, CongestionControl,
    LossRecovery, RateSample, TcpState,
};
use cclab_units::{Duration, Time};
use std::collections::VecDeque;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted and the retransmission not yet known delivered or lost.
const RETRANS: u8 = 4;
/// Ever retransmitted (Karn: no RTT sample from it).
const EVER_RETRANS: u8 = 8;
const APP_LIMITED: u8 = 16;

/// RFC 6675 DupThresh / Linux's default reordering.
const DUPTHRESH: u32 = 3;
/// Window of the min-RTT filter.
const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);

/// One outstanding segment (32 bytes).
#[derive(Clone, Copy, Debug, Default)]
struct SegInfo {
    /// Last (re)transmission time, ns.
    sent: u64,
    /// tcp_rate.c: `tp->first_tx_mstamp` and `delivered_mstamp` at send time, ns.
    first_tx: u64,
    delivered_time: u64,
    /// `tp->delivered` at send time.
    delivered: u32,
    flags: u8,
}

/// Per-flow counters for reports.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub undos: u64,
    pub rtt_us: Histogram,
    /// When the last byte of a finite transfer was acknowledged.
    pub completed_at: Option<Time>,
}

/// Send times, in ns, of the segments one ACK newly delivers, from which its RTT samples
/// come (Linux `tcp_clean_rtx_queue`'s `first_ackt`/`last_ackt`, `tcp_sacktag_state`'s
/// `first_sackt`/`last_sackt`). Karn's rule: only never-retransmitted segments count.
#[derive(Clone, Copy, Debug, Default)]
struct AckedTimes {
    /// Oldest and newest cumulatively acknowledged segment not SACKed before.
    first_ackt: Option<u64>,
    last_ackt: Option<u64>,
    /// The cumulative ACK covers a segment that was ever retransmitted, SACKed or not
    /// (`FLAG_RETRANS_DATA_ACKED`): the sequence sample is void, since the segments
    /// above such a hole may have arrived long before this ACK could be sent.
    retrans_acked: bool,
    /// Lowest and highest newly SACKed segment, as (segment, send time).
    first_sackt: Option<(u32, u64)>,
    last_sackt: Option<(u32, u64)>,
}

impl AckedTimes {
    fn cumulatively_acked(&mut self, flags: u8, sent: u64) {
        if flags & EVER_RETRANS != 0 {
            self.retrans_acked = true;
        } else if flags & SACKED == 0 {
            self.first_ackt.get_or_insert(sent);
            self.last_ackt = Some(sent);
        }
    }

    fn newly_sacked(&mut self, flags: u8, seq: u32, sent: u64) {
        if flags & EVER_RETRANS != 0 {
            return;
        }
        if self.first_sackt.is_none_or(|(s, _)| seq < s) {
            self.first_sackt = Some((seq, sent));
        }
        if self.last_sackt.is_none_or(|(s, _)| seq > s) {
            self.last_sackt = Some((seq, sent));
        }
    }
}

/// One ACK's RTT samples in microseconds (Linux `tcp_ack_update_rtt`'s inputs after its
/// timestamp fallback): `seq_rtt_us` feeds the RFC 6298 estimator, `ca_rtt_us` (the most
/// recently sent segment's) the min-RTT filter, `pkts_acked`, the rate sample and the
/// RTT statistics. Both are present or both absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RttSamples {
    seq_rtt_us: Option<u64>,
    ca_rtt_us: Option<u64>,
}

/// Delivery-rate sample being built during one ACK (tcp_rate.c).
#[derive(Clone, Copy, Debug, Default)]
struct RateBuild {
    valid: bool,
    prior_delivered: u32,
    prior_time: u64,
    send_elapsed: u64,
    last_sent: u64,
    app_limited: bool,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    pub ca: Algorithm,
    pub tp: TcpState,
    pub stats: SenderStats,
    cfg: TcpConfig,
    flow: u32,
    recovery: LossRecovery,
    /// Segments of a finite transfer (None: bulk) and the last one's payload.
    total_segs: Option<u32>,
    last_payload: u32,
    /// The application stopped giving data (the flow's stop time passed).
    app_closed: bool,
    started: bool,

    snd_una: u32,
    snd_nxt: u32,
    /// Scoreboard of segments `[snd_una, snd_nxt)`.
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
    /// Recovery point (Linux `high_seq`).
    high_seq: u32,
    /// Duplicate ACKs (NewReno/Tahoe).
    dupacks: u32,

    // PRR (RFC 6937).
    prr_delivered: u32,
    prr_out: u32,

    // Undo.
    prior_ssthresh: u32,
    undo_marker: bool,
    retrans_stamp: Option<Time>,

    // RTT / RTO (Linux units: microseconds).
    mdev_us: u32,
    mdev_max_us: u32,
    rttvar_us: u32,
    rtt_seq: u32,
    rto: Duration,
    /// RTOs since snd_una last advanced (Linux `icsk_retransmits`).
    rtos_since_progress: u32,
    rto_deadline: Option<Time>,
    min_rtt_stamp: Time,

    // Delivery rate (tcp_rate.c).
    delivered_time: u64,
    first_tx_time: u64,
    app_limited_until: u32,

    // cwnd validation (tcp_cwnd_validate).
    cwnd_usage_seq: u32,
    last_send: Time,
    /// Segments the receiver window allows outstanding.
    rwnd_segs: u32,
}

impl TcpSender {
    /// A sender for `flow` with algorithm `ca`; `bytes` is a finite transfer size (None: bulk).
    pub fn new(flow: u32, ca: Algorithm, cfg: TcpConfig, bytes: Option<u64>) -> TcpSender {
        let mss = cfg.mss.max(1);
        let recovery = cfg.recovery.unwrap_or_else(|| ca.loss_recovery());
        let (total_segs, last_payload) = match bytes {
            Some(b) => {
                let n = b.div_ceil(mss as u64).min(u32::MAX as u64 / 2) as u32;
                let last = (b - (n.max(1) as u64 - 1) * mss as u64) as u32;
                (Some(n), last)
            }
            None => (None, mss),
        };
        let rwnd_segs =
            cfg.rwnd.map_or(u32::MAX, |w| (w / mss as u64).clamp(1, u32::MAX as u64) as u32);
        let mut tp = TcpState::new(mss, cfg.init_cwnd);
        tp.hz = cfg.hz;
        TcpSender {
            ca,
            tp,
            stats: SenderStats::default(),
            rto: cfg.rto_initial,
            cfg,
            flow,
            recovery,
            total_segs,
            last_payload,
            app_closed: false,
            started: false,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            sacked_ranges: Vec::new(),
            scan: 0,
            scan_sacked: 0,
            rexmit_hint: 0,
            lost_limit: 0,
            high_seq: 0,
            dupacks: 0,
            prr_delivered: 0,
            prr_out: 0,
            prior_ssthresh: 0,
            undo_marker: false,
            retrans_stamp: None,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rtos_since_progress: 0,
            rto_deadline: None,
            min_rtt_stamp: Time::ZERO,
            delivered_time: 0,
            first_tx_time: 0,
            app_limited_until: 0,
            cwnd_usage_seq: 0,
            last_send: Time::ZERO,
            rwnd_segs,
        }
    }

    // ----- queries -----

    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u32 {
        self.snd_nxt
    }
    pub fn packets_out(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// Linux `tcp_packets_in_flight`: packets_out - (sacked + lost) + retransmitted.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    pub fn rto(&self) -> Duration {
        self.rto
    }
    /// The sender's part of a time-series sample (window, RTT, flight, retransmits, the
    /// algorithm's variables): the one place a sample reads the sender, for the
    /// simulator and for cclab's TCP over UDP alike. The caller sets time, flow and the
    /// delivered bytes, which it counts its own way.
    pub fn fill_sample(&self, s: &mut FlowSample) {
        s.cwnd_pkts = self.tp.snd_cwnd;
        s.ssthresh_pkts = self.tp.snd_ssthresh;
        s.srtt = Duration::from_micros(self.tp.srtt_us() as u64);
        s.inflight_pkts = self.in_flight();
        s.retransmits = self.stats.retransmits;
        s.cc.clear();
        self.ca.inspect(&mut |k, v| s.cc.push((k, v)));
    }
    pub fn rto_deadline(&self) -> Option<Time> {
        self.rto_deadline
    }
    pub fn recovery_style(&self) -> LossRecovery {
        self.recovery
    }
    /// All data of a finite transfer acknowledged.
    pub fn is_complete(&self) -> bool {
        self.stats.completed_at.is_some()
    }
    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    fn has_new_data(&self) -> bool {
        !self.app_closed && self.total_segs.is_none_or(|n| self.snd_nxt < n)
    }

    fn seg(&mut self, seq: u32) -> &mut SegInfo {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    fn sync_tp(&mut self, now: Time) {
        self.tp.now_us = now.as_micros();
        self.tp.packets_in_flight = self.in_flight();
        self.tp.snd_una = self.snd_una;
        self.tp.snd_nxt = self.snd_nxt;
    }

    // ----- live settings -----

    /// Sets `rto_min` (takes effect at the next RTT sample, as `ip route ... rto_min`).
    pub fn set_rto_min(&mut self, d: Duration) {
        self.cfg.rto_min = d;
    }
    /// Sets `initcwnd`: used at the flow's start (if not started yet) and at the next
    /// restart after idle; a running flow's cwnd is not changed.
    pub fn set_init_cwnd(&mut self, segs: u32) {
        self.cfg.init_cwnd = segs.max(1);
        if !self.started {
            self.tp.snd_cwnd = self.cfg.init_cwnd;
        }
    }

    // ----- life cycle -----

    /// The connection starts (handshake not modelled): `init` hook, cwnd = initcwnd.
    pub fn start(&mut self, now: Time) {
        self.started = true;
        self.tp.snd_cwnd = self.cfg.init_cwnd.max(1);
        self.sync_tp(now);
        self.ca.init(&mut self.tp);
    }

    /// The application stops offering new data; outstanding data is still recovered.
    pub fn close(&mut self) {
        self.app_closed = true;
    }

    // ----- sending -----

    /// Sends what cwnd, the receiver window and the data allow: lost segments first, then
    /// new data (`tcp_xmit_retransmit_queue`, then `tcp_write_xmit`). Each segment goes to
    /// `out`. Returns the number sent.
    pub fn transmit(&mut self, now: Time, out: &mut impl FnMut(Segment)) -> u32 {
        if !self.started || self.is_complete() {
            return 0;
        }
        self.sync_tp(now);
        if self.packets_out() == 0 && self.has_new_data() && self.last_send > Time::ZERO {
            self.maybe_restart_after_idle(now);
        }
        let mut sent = 0;
        let mut cwnd_limited = false;
        loop {
            let in_flight = self.in_flight();
            if in_flight >= self.tp.snd_cwnd {
                cwnd_limited = true;
                break;
            }
            if let Some(seq) = self.next_lost() {
                self.retransmit(now, seq, out);
            } else if self.has_new_data() && self.packets_out() < self.rwnd_segs {
                self.send_new(now, out);
            } else {
                break;
            }
            sent += 1;
        }
        if sent > 0 {
            self.cwnd_validate(cwnd_limited);
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rto);
            }
        }
        // tcp_rate_check_app_limited: not cwnd-limited and nothing more to send.
        if !cwnd_limited && !self.has_new_data() && self.next_lost().is_none() {
            self.app_limited_until = (self.tp.delivered + self.in_flight()).max(1);
        }
        self.sync_tp(now);
        sent
    }

    fn maybe_restart_after_idle(&mut self, now: Time) {
        let idle = now.saturating_since(self.last_send);
        if idle <= self.rto {
            return;
        }
        self.ca.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        self.tp.snd_ssthresh = self.current_ssthresh();
        let restart = self.cfg.init_cwnd.max(1).min(self.tp.snd_cwnd);
        let mut cwnd = self.tp.snd_cwnd;
        let mut left = idle.0 as i128 - self.rto.0 as i128;
        while left > 0 && cwnd > restart {
            cwnd >>= 1;
            left -= self.rto.0 as i128;
        }
        self.tp.snd_cwnd = cwnd.max(restart);
        self.tp.snd_cwnd_cnt = 0;
    }

    /// Linux `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        }
    }

    fn payload_of(&self, seq: u32) -> u32 {
        match self.total_segs {
            Some(n) if seq + 1 == n => self.last_payload,
            _ => self.cfg.mss,
        }
    }

    fn stamp(&mut self, now: Time, seq: u32, out: &mut impl FnMut(Segment)) {
        let payload = self.payload_of(seq);
        out(Segment {
            flow: self.flow,
            seq,
            payload,
            wire_bytes: payload + self.cfg.header_bytes,
            tsval: now,
        });
        self.last_send = now;
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
    }

    /// tcp_rate_skb_sent: remember the delivery state at send time.
    fn rate_info(&mut self, now: Time) -> SegInfo {
        if self.packets_out() == 0 {
            self.first_tx_time = now.0;
            self.delivered_time = now.0;
        }
        let mut flags = 0;
        if self.app_limited_until != 0 {
            flags |= APP_LIMITED;
        }
        SegInfo {
            sent: now.0,
            first_tx: self.first_tx_time,
            delivered_time: self.delivered_time,
            delivered: self.tp.delivered,
            flags,
        }
    }

    fn send_new(&mut self, now: Time, out: &mut impl FnMut(Segment)) {
        if self.in_flight() == 0 {
            self.ca.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let info = self.rate_info(now);
        self.segs.push_back(info);
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        self.stamp(now, seq, out);
    }

    fn retransmit(&mut self, now: Time, seq: u32, out: &mut impl FnMut(Segment)) {
        let mut info = self.rate_info(now);
        let s = self.seg(seq);
        info.flags |= s.flags | RETRANS | EVER_RETRANS;
        *s = info;
        self.retrans_out += 1;
        self.stats.retransmits += 1;
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(now);
        }
        self.stamp(now, seq, out);
    }

    /// The lowest segment marked lost and not retransmitted, if any (amortised O(1)).
    fn next_lost(&mut self) -> Option<u32> {
        if self.lost_out == 0 || self.lost_out <= self.retrans_out_of_lost() {
            return None;
        }
        let mut s = self.rexmit_hint.max(self.snd_una);
        let end = self.lost_limit.min(self.snd_nxt);
        while s < end {
            let f = self.segs[(s - self.snd_una) as usize].flags;
            if f & LOST != 0 && f & RETRANS == 0 {
                self.rexmit_hint = s;
                return Some(s);
            }
            s += 1;
        }
        self.rexmit_hint = s;
        None
    }

    /// Retransmitted segments that are marked lost (all of them: a retransmission is only
    /// made of a lost segment).
    fn retrans_out_of_lost(&self) -> u32 {
        self.retrans_out
    }

    /// Linux `tcp_cwnd_validate`: track whether cwnd limited sending in this window.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.packets_out() > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.packets_out();
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    // ----- marking -----

    fn mark_lost(&mut self, seq: u32) {
        let i = (seq - self.snd_una) as usize;
        let f = &mut self.segs[i].flags;
        if *f & (LOST | SACKED) != 0 {
            return;
        }
        *f |= LOST;
        self.lost_out += 1;
        self.rexmit_hint = self.rexmit_hint.min(seq);
        self.lost_limit = self.lost_limit.max(seq + 1);
    }

    /// RFC 6675 IsLost, incrementally: advance the scan while at least DupThresh SACKed
    /// segments lie above the scan point.
    fn mark_lost_sack(&mut self) {
        if self.scan < self.snd_una {
            self.scan = self.snd_una;
            self.scan_sacked = 0;
        }
        while self.scan < self.snd_nxt {
            let f = self.segs[(self.scan - self.snd_una) as usize].flags;
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
    fn mark_all_lost(&mut self) {
        self.retrans_out = 0;
        let mut lost = 0;
        for s in self.segs.iter_mut() {
            s.flags &= !RETRANS;
            if s.flags & SACKED == 0 {
                s.flags |= LOST;
                lost += 1;
            }
        }
        self.lost_out = lost;
        self.rexmit_hint = self.snd_una;
        self.lost_limit = self.snd_nxt;
        self.scan = self.snd_nxt;
        self.scan_sacked = self.sacked_out;
    }

    /// One segment newly delivered (cumulatively or by SACK): tcp_rate_skb_delivered.
    fn rate_delivered(&mut self, info: SegInfo, rb: &mut RateBuild) {
        // Prefer the most recently sent of the segments delivered by this ACK.
        if !rb.valid || info.sent >= rb.last_sent {
            rb.valid = true;
            rb.last_sent = info.sent;
            rb.prior_delivered = info.delivered;
            rb.prior_time = info.delivered_time;
            rb.app_limited = info.flags & APP_LIMITED != 0;
            rb.send_elapsed = info.sent.saturating_sub(info.first_tx);
            self.first_tx_time = info.sent;
        }
    }

    // ----- receiving ACKs -----

    /// Processes one ACK (Linux `tcp_ack`). The caller then calls [`transmit`](Self::transmit).
    pub fn on_ack(&mut self, now: Time, ack: &Ack) {
        if !self.started || ack.ack > self.snd_nxt || ack.ack < self.snd_una {
            return; // acknowledges unsent data, or an old ACK
        }
        self.sync_tp(now);
        let prior_una = self.snd_una;
        let prior_in_flight = self.in_flight();
        let prior_lost = self.lost_out;
        let mut rb = RateBuild::default();
        let sack_mode = self.recovery == LossRecovery::Sack;

        // 1. SACK tagging.
        let mut newly_sacked = 0u32;
        let mut times = AckedTimes::default();
        if sack_mode {
            for &(a, b) in ack.sack_blocks() {
                let a = a.max(ack.ack).max(self.snd_una);
                let b = b.min(self.snd_nxt);
                if a < b {
                    newly_sacked += self.sack_range(a, b, &mut rb, &mut times);
                }
            }
        }

        // 2. Cumulative ACK: tcp_clean_rtx_queue.
        let mut acked = 0u32;
        while self.snd_una < ack.ack {
            let info = self.segs.pop_front().expect("scoreboard covers snd_una..snd_nxt");
            let seq = self.snd_una;
            self.snd_una += 1;
            times.cumulatively_acked(info.flags, info.sent);
            if info.flags & SACKED != 0 {
                self.sacked_out -= 1;
                if seq < self.scan {
                    self.scan_sacked -= 1;
                }
                continue;
            }
            acked += 1;
            if info.flags & LOST != 0 {
                self.lost_out -= 1;
            }
            if info.flags & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            self.rate_delivered(info, &mut rb);
        }
        // Forget SACK ranges now below snd_una.
        if self.snd_una > prior_una {
            let una = self.snd_una;
            self.sacked_ranges.retain_mut(|r| {
                r.0 = r.0.max(una);
                r.0 < r.1
            });
        }
        let advanced = self.snd_una > prior_una;
        let delivered_now = acked + newly_sacked;
        if !sack_mode && !advanced && self.packets_out() > 0 && self.tp.ca_state != CaState::Loss {
            // A duplicate ACK: Linux's tcp_add_reno_sack emulates one SACKed segment.
            self.dupacks += 1;
            if self.sacked_out + self.lost_out < self.packets_out() {
                self.sacked_out += 1;
            }
        }
        let mut delivered_count = delivered_now;
        if !sack_mode {
            if advanced {
                // tcp_remove_reno_sacks: one ACK filled a hole, the rest were counted as dupacks.
                delivered_count = acked.saturating_sub(self.sacked_out).max(1);
                self.sacked_out = self.sacked_out.saturating_sub(acked.saturating_sub(1));
                self.dupacks = 0;
            } else if self.dupacks > 0 && self.packets_out() > 0 {
                delivered_count = 1;
            }
        }
        self.tp.delivered = self.tp.delivered.wrapping_add(delivered_count);
        if delivered_count > 0 {
            self.delivered_time = now.0;
        }

        let rtt = rtt_samples(now, &times, advanced, ack.tsecr);
        if let (Some(seq_rtt), Some(ca_rtt)) = (rtt.seq_rtt_us, rtt.ca_rtt_us) {
            self.update_min_rtt(now, ca_rtt);
            self.rtt_estimator(seq_rtt);
            self.stats.rtt_us.record(ca_rtt);
        }
        let ca_rtt_us = rtt.ca_rtt_us.map(|r| r.min(u32::MAX as u64) as u32);
        self.sync_tp(now);
        if acked > 0 || newly_sacked > 0 {
            let sample = AckSample {
                pkts_acked: acked + newly_sacked,
                rtt_us: ca_rtt_us,
                in_flight: prior_in_flight,
            };
            self.ca.pkts_acked(&mut self.tp, &sample);
        }
        // 3. in_ack_event.
        let flags = AckFlags {
            slow_path: ack.n_sacks > 0 || !advanced,
            window_update: advanced,
            ece: false,
            acked_bytes: acked.saturating_mul(self.cfg.mss),
        };
        self.ca.in_ack_event(&mut self.tp, flags);

        // RTO timer: rearm on forward progress (tcp_rearm_rto).
        if advanced {
            self.rtos_since_progress = 0;
            self.rto_deadline = if self.packets_out() > 0 { Some(now + self.rto) } else { None };
        }

        // 4. Loss detection and the recovery state machine.
        let tsecr = ack.tsecr;
        self.fastretrans_alert(now, advanced, tsecr);
        let newly_lost = self.lost_out.saturating_sub(prior_lost);

        // 5. Rate sample (tcp_rate_gen).
        let mut rs = RateSample {
            delivered: 0,
            interval_us: 0,
            rtt_us: ca_rtt_us,
            losses: newly_lost,
            acked_sacked: delivered_count,
            prior_in_flight,
            is_app_limited: rb.app_limited,
        };
        if self.app_limited_until != 0 && self.tp.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if rb.valid {
            rs.delivered = self.tp.delivered.wrapping_sub(rb.prior_delivered);
            let ack_elapsed = now.0.saturating_sub(rb.prior_time);
            let interval_us = rb.send_elapsed.max(ack_elapsed) / 1000;
            if interval_us >= self.tp.min_rtt_us as u64 {
                rs.interval_us = interval_us;
            }
        }

        // 6. cwnd update (tcp_cong_control).
        self.sync_tp(now);
        if !self.ca.cong_control(&mut self.tp, &rs) {
            if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(delivered_count, newly_lost, advanced);
            } else if acked > 0 {
                // tcp_may_raise_cwnd: only on in-order delivery (FLAG_DATA_ACKED).
                self.ca.cong_avoid(&mut self.tp, delivered_count);
            }
        }
        self.tp.snd_cwnd = self.tp.snd_cwnd.max(1);

        // Completion of a finite transfer.
        if let Some(n) = self.total_segs {
            if self.snd_una >= n && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(now);
                self.rto_deadline = None;
            }
        }
        self.sync_tp(now);
    }

    /// SACK-tags `[a, b)`; only the parts not already SACKed are walked. Returns the
    /// number of newly SACKed segments.
    fn sack_range(&mut self, a: u32, b: u32, rb: &mut RateBuild, times: &mut AckedTimes) -> u32 {
        // Subtract the existing ranges, walking only the gaps.
        let mut newly = 0;
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
                newly += 1;
                let idx = (seq - self.snd_una) as usize;
                let info = self.segs[idx];
                let f = &mut self.segs[idx].flags;
                *f |= SACKED;
                if *f & LOST != 0 {
                    *f &= !LOST;
                    self.lost_out -= 1;
                }
                if *f & RETRANS != 0 {
                    *f &= !RETRANS;
                    self.retrans_out -= 1;
                }
                self.sacked_out += 1;
                if seq < self.scan {
                    self.scan_sacked += 1;
                }
                times.newly_sacked(info.flags, seq, info.sent);
                self.rate_delivered(info, rb);
            }
            cur = gap_end;
        }
        // Merge [a, b) into the ranges.
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
        newly
    }

    /// Linux `tcp_rtt_estimator` + `tcp_set_rto` (microseconds, srtt and mdev scaled).
    fn rtt_estimator(&mut self, m_us: u64) {
        let m = m_us.min(u32::MAX as u64 / 16) as i64;
        let rto_min_us = self.cfg.rto_min.as_micros().min(u32::MAX as u64 / 4) as u32;
        let mut srtt = self.tp.srtt_us as i64;
        if srtt != 0 {
            let mut d = m - (srtt >> 3);
            srtt += d;
            if d < 0 {
                d = -d;
                d -= (self.mdev_us >> 2) as i64;
                if d > 0 {
                    d >>= 3;
                }
            } else {
                d -= (self.mdev_us >> 2) as i64;
            }
            self.mdev_us = (self.mdev_us as i64 + d).max(0) as u32;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if self.snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = self.snd_nxt;
                self.mdev_max_us = rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = (m << 1) as u32;
            self.rttvar_us = self.mdev_us.max(rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = self.snd_nxt;
        }
        self.tp.srtt_us = srtt.clamp(1, u32::MAX as i64) as u32;
        let rto_us = (self.tp.srtt_us >> 3) as u64 + self.rttvar_us as u64;
        self.rto = Duration::from_micros(rto_us).min(self.cfg.rto_max);
        // RFC 6298 5.7 / Linux: a valid sample clears the backoff (`rto` was just
        // recomputed from srtt and rttvar, dropping any doubling).
    }

    /// Windowed min RTT (Linux `tcp_update_rtt_min`, fed `ca_rtt_us`).
    fn update_min_rtt(&mut self, now: Time, ca_rtt_us: u64) {
        let m = ca_rtt_us.min(u32::MAX as u64) as u32;
        if m <= self.tp.min_rtt_us || now.saturating_since(self.min_rtt_stamp) > MIN_RTT_WINDOW {
            self.tp.min_rtt_us = m;
            self.min_rtt_stamp = now;
        }
    }

    /// Linux `tcp_fastretrans_alert`, reduced to what this model needs.
    fn fastretrans_alert(&mut self, now: Time, advanced: bool, tsecr: Time) {
        let sack_mode = self.recovery == LossRecovery::Sack;
        // Leave Recovery / Loss once everything outstanding at its start is acknowledged.
        let state = self.tp.ca_state;
        match state {
            CaState::Recovery | CaState::Cwr if self.snd_una >= self.high_seq => {
                if !self.try_undo(now, tsecr) {
                    // tcp_end_cwnd_reduction: cwnd to ssthresh, then tell the algorithm
                    // (Westwood+ sets its window from the bandwidth estimate here).
                    if self.tp.snd_ssthresh < INFINITE_SSTHRESH {
                        self.tp.snd_cwnd = self.tp.snd_ssthresh;
                        self.tp.snd_cwnd_cnt = 0;
                    }
                    self.ca.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
                }
                self.set_state(CaState::Open);
                self.retrans_stamp = None;
            }
            CaState::Loss if self.snd_una >= self.high_seq => {
                self.try_undo(now, tsecr);
                self.set_state(CaState::Open);
                self.retrans_stamp = None;
            }
            // tcp_try_undo_loss: an ACK for data sent before the timeout.
            CaState::Loss if advanced && self.undo_marker && self.try_undo(now, tsecr) => {
                self.set_state(CaState::Open);
            }
            _ => {}
        }
        match self.recovery {
            LossRecovery::Sack => {
                if self.sacked_out > 0 {
                    self.mark_lost_sack();
                }
            }
            LossRecovery::NewReno => {
                if self.tp.ca_state == CaState::Recovery && advanced && self.packets_out() > 0 {
                    // RFC 6582 partial ACK: retransmit the next hole at once.
                    self.mark_lost(self.snd_una);
                }
            }
            LossRecovery::Tahoe => {}
        }

        if matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) && self.packets_out() > 0 {
            let time_to_recover =
                if sack_mode { self.lost_out > 0 } else { self.dupacks >= DUPTHRESH };
            if time_to_recover {
                match self.recovery {
                    LossRecovery::Tahoe => self.enter_tahoe_loss(now),
                    _ => self.enter_recovery(now),
                }
            } else if self.sacked_out > 0 || self.dupacks > 0 {
                if self.tp.ca_state != CaState::Disorder {
                    self.set_state(CaState::Disorder);
                }
            } else if self.tp.ca_state != CaState::Open {
                self.set_state(CaState::Open);
            }
        }
        if !sack_mode {
            // tcp_limit_reno_sacked: emulated SACKs never exceed what is not marked lost.
            self.sacked_out =
                self.sacked_out.min(self.packets_out() - self.lost_out.min(self.packets_out()));
        }
    }

    fn set_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.ca.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// tcp_init_undo + remembering the window before a reduction.
    fn init_undo(&mut self) {
        self.prior_ssthresh = self.current_ssthresh();
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.undo_marker = true;
        self.retrans_stamp = None;
    }

    /// Linux `tcp_enter_recovery` (+ PRR init, `tcp_init_cwnd_reduction`).
    fn enter_recovery(&mut self, now: Time) {
        self.stats.fast_recoveries += 1;
        self.init_undo();
        self.high_seq = self.snd_nxt;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sync_tp(now);
        self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp).max(2);
        self.tp.snd_cwnd_cnt = 0;
        if self.recovery == LossRecovery::NewReno {
            self.mark_lost(self.snd_una);
        }
        self.set_state(CaState::Recovery);
    }

    /// Tahoe's response to three duplicate ACKs: as an RTO without the timer.
    fn enter_tahoe_loss(&mut self, now: Time) {
        self.stats.fast_recoveries += 1;
        self.init_undo();
        self.undo_marker = false;
        self.sync_tp(now);
        self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp).max(2);
        self.mark_all_lost();
        self.sacked_out = 0;
        self.dupacks = 0;
        self.tp.snd_cwnd = 1;
        self.tp.snd_cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.set_state(CaState::Loss);
    }

    /// Eifel-style undo with timestamps (Linux `tcp_packet_delayed` + `tcp_undo_cwnd_reduction`).
    fn try_undo(&mut self, now: Time, tsecr: Time) -> bool {
        let spurious = match self.retrans_stamp {
            Some(rs) => self.undo_marker && tsecr < rs && tsecr > Time::ZERO,
            None => false,
        };
        self.undo_marker = false;
        if !spurious {
            return false;
        }
        self.sync_tp(now);
        let cwnd = self.ca.undo_cwnd(&mut self.tp);
        self.tp.snd_cwnd = cwnd.max(1);
        if self.prior_ssthresh > self.tp.snd_ssthresh {
            self.tp.snd_ssthresh = self.prior_ssthresh;
        }
        // Nothing was really lost: forget the loss marks (go-back-N would resend data
        // the receiver has).
        // The retransmitted copies in flight are forgotten too (Linux keeps counting them
        // in retrans_out; here every segment in retransmission is also marked lost, which
        // keeps the retransmit scan simple), so in_flight is briefly understated.
        if self.lost_out > 0 || self.retrans_out > 0 {
            for s in self.segs.iter_mut() {
                s.flags &= !(LOST | RETRANS);
            }
            self.lost_out = 0;
            self.retrans_out = 0;
        }
        self.stats.undos += 1;
        true
    }

    /// Linux `tcp_cwnd_reduction` (PRR, RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        let prr_out = self.prr_out as i64;
        let mut sndcnt = if delta < 0 {
            let dividend = ssthresh * self.prr_delivered as i64 + self.tp.prior_cwnd as i64 - 1;
            dividend / self.tp.prior_cwnd as i64 - prr_out
        } else {
            let mut s = (self.prr_delivered as i64 - prr_out).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.snd_cwnd = (in_flight + sndcnt).clamp(1, u32::MAX as i64) as u32;
    }

    /// The retransmission timer fired (Linux `tcp_retransmit_timer` → `tcp_enter_loss`).
    pub fn on_rto(&mut self, now: Time) {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.packets_out() == 0 {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        self.sync_tp(now);
        self.mark_all_lost();
        if !self.recovery_is_sack() {
            self.sacked_out = 0;
            self.dupacks = 0;
        }
        let first_rto = self.rtos_since_progress == 0;
        self.rtos_since_progress += 1;
        if matches!(self.tp.ca_state, CaState::Open | CaState::Disorder)
            || self.snd_una >= self.high_seq
            || (self.tp.ca_state == CaState::Loss && first_rto)
        {
            self.init_undo();
            self.sync_tp(now);
            self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp).max(2);
            self.ca.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.tp.snd_cwnd = self.in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.set_state(CaState::Loss);
        self.rto = self.rto.saturating_mul(2).min(self.cfg.rto_max);
        self.rto_deadline = Some(now + self.rto);
        self.retrans_stamp = None;
        self.sync_tp(now);
    }

    fn recovery_is_sack(&self) -> bool {
        self.recovery == LossRecovery::Sack
    }

    /// Checks the scoreboard's bookkeeping against a full recount (for tests; O(window)).
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for s in &self.segs {
            sacked += (s.flags & SACKED != 0) as u32;
            lost += (s.flags & LOST != 0) as u32;
            retrans += (s.flags & RETRANS != 0) as u32;
            if s.flags & SACKED != 0 && s.flags & (LOST | RETRANS) != 0 {
                return Err("a SACKed segment is also marked lost or retransmitted".into());
            }
        }
        if self.segs.len() as u32 != self.packets_out() {
            return Err(format!(
                "scoreboard holds {} segments, packets_out is {}",
                self.segs.len(),
                self.packets_out()
            ));
        }
        if self.recovery_is_sack() && sacked != self.sacked_out {
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
        if self.sacked_out + self.lost_out > self.packets_out() {
            return Err(format!(
                "sacked {} + lost {} exceed packets_out {}",
                self.sacked_out,
                self.lost_out,
                self.packets_out()
            ));
        }
        if self.retrans_out > self.lost_out {
            return Err(format!(
                "retrans_out {} exceeds lost_out {}",
                self.retrans_out, self.lost_out
            ));
        }
        if self.tp.snd_cwnd < 1 {
            return Err("cwnd below 1".into());
        }
        if self.tp.snd_ssthresh < 1 {
            return Err("ssthresh 0".into());
        }
        if self.tp.packets_in_flight != self.in_flight() {
            return Err(format!(
                "tp.packets_in_flight {} stale (in_flight {})",
                self.tp.packets_in_flight,
                self.in_flight()
            ));
        }
        if self.recovery_is_sack() {
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
                .filter(|s| s.flags & SACKED != 0)
                .count() as u32;
            if self.scan >= self.snd_una && below != self.scan_sacked {
                return Err(format!(
                    "scan_sacked {} but {} SACKed below the scan",
                    self.scan_sacked, below
                ));
            }
        }
        Ok(())
    }
}

/// One ACK's RTT samples, as Linux takes them at the end of `tcp_clean_rtx_queue` and in
/// `tcp_ack_update_rtt`: the sequence sample from the oldest cumulatively acknowledged
/// segment unless retransmitted data was acknowledged, else the SACK sample from the
/// lowest newly SACKed segment, else, if the ACK advanced `snd_una`, the echoed timestamp
/// (RFC 7323 RTTM: the receiver echoes the segment that advanced its window, so this is a
/// real round trip even when that segment was a retransmission). `ca_rtt_us` comes from
/// the highest newly SACKed segment if any, else from the newest cumulatively
/// acknowledged one (or from the timestamp, with the sequence sample). Samples are at
/// least 1 us.
fn rtt_samples(now: Time, t: &AckedTimes, advanced: bool, tsecr: Time) -> RttSamples {
    let since = |sent: u64| (now.0.saturating_sub(sent) / 1000).max(1);
    let mut r = RttSamples::default();
    if !t.retrans_acked {
        r.seq_rtt_us = t.first_ackt.map(since);
        r.ca_rtt_us = t.last_ackt.map(since);
    }
    if let (Some((_, first)), Some((_, last))) = (t.first_sackt, t.last_sackt) {
        r.seq_rtt_us = r.seq_rtt_us.or(Some(since(first)));
        r.ca_rtt_us = Some(since(last));
    }
    if r.seq_rtt_us.is_none() && advanced && tsecr > Time::ZERO {
        // The timestamps tick in microseconds here (Linux's usec TS option); default
        // Linux ticks in milliseconds.
        r.seq_rtt_us = Some(since(tsecr.0));
        r.ca_rtt_us = r.seq_rtt_us;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn samples(t: &AckedTimes, advanced: bool, tsecr_ms: u64) -> (Option<u64>, Option<u64>) {
        let r = rtt_samples(Time(1000 * MS), t, advanced, Time(tsecr_ms * MS));
        (r.seq_rtt_us, r.ca_rtt_us)
    }

    #[test]
    fn cumulative_ack_samples_its_oldest_and_newest_segments() {
        let mut t = AckedTimes::default();
        t.cumulatively_acked(0, 900 * MS);
        t.cumulatively_acked(SACKED, 930 * MS); // SACKed earlier: no sample from it
        t.cumulatively_acked(0, 920 * MS);
        assert_eq!(samples(&t, true, 0), (Some(100_000), Some(80_000)));
    }

    #[test]
    fn retransmitted_data_voids_the_sequence_sample_and_the_timestamp_stands_in() {
        // A NewReno partial ACK: the retransmitted hole (resent at 950 ms) and segments
        // above it sent at 100 ms, which waited at the receiver behind the hole.
        let mut t = AckedTimes::default();
        t.cumulatively_acked(EVER_RETRANS | LOST, 950 * MS);
        t.cumulatively_acked(0, 100 * MS);
        t.cumulatively_acked(0, 101 * MS);
        assert_eq!(samples(&t, true, 950), (Some(50_000), Some(50_000)));
        // A retransmitted segment SACKed before counts too (Linux tests TCPCB_RETRANS first).
        let mut t = AckedTimes::default();
        t.cumulatively_acked(0, 100 * MS);
        t.cumulatively_acked(SACKED | EVER_RETRANS, 950 * MS);
        assert_eq!(samples(&t, true, 960), (Some(40_000), Some(40_000)));
        // No timestamp echoed: no sample at all.
        assert_eq!(samples(&t, true, 0), (None, None));
    }

    #[test]
    fn sack_sample_fills_in_for_the_estimator_and_gives_ca_rtt() {
        let mut t = AckedTimes::default();
        t.newly_sacked(0, 12, 960 * MS);
        t.newly_sacked(0, 10, 940 * MS);
        t.newly_sacked(EVER_RETRANS, 11, 990 * MS); // a retransmission: not sampled
        assert_eq!(samples(&t, false, 0), (Some(60_000), Some(40_000)), "lowest, highest");
        // With a cumulative sample too, the estimator takes the cumulative one and ca_rtt
        // the newest SACKed segment's.
        t.cumulatively_acked(0, 900 * MS);
        assert_eq!(samples(&t, true, 0), (Some(100_000), Some(40_000)));
    }

    #[test]
    fn timestamp_is_used_only_when_the_ack_advances_snd_una() {
        let t = AckedTimes { retrans_acked: true, ..Default::default() };
        assert_eq!(samples(&t, false, 990), (None, None), "a duplicate ACK measures nothing");
        assert_eq!(samples(&t, true, 1000), (Some(1), Some(1)), "at least 1 us");
    }
}
