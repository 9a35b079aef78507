//! The TCP sender, following Linux (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c,
//! tcp_rate.c) where congestion control can see the difference. It is split as Linux
//! splits those files; this one holds the connection, sending, the order of ACK
//! processing and the retransmission timer, and the parts hold the rest:
//!
//! - `scoreboard.rs`: outstanding segments, SACK ranges, lost and retransmitted marks,
//!   RFC 6675 loss detection.
//! - `rack.rs`: RACK loss detection (tcp_recovery.c), the default with SACK.
//! - `tlp.rs`: the tail-loss probe (tcp_output.c, tcp_input.c), with RACK.
//! - `recovery.rs`: the recovery state machine (`tcp_fastretrans_alert`), PRR, undo,
//!   NewReno and Tahoe.
//! - `rtt.rs`: RTT samples, the RFC 6298 estimator and RTO, min RTT.
//! - `rate.rs`: delivery-rate sampling (tcp_rate.c).
//! - `handshake.rs`: SYN-SENT, its SYN timer and what the SYN-ACK gives the connection.
//!
//! ACK processing runs in `tcp_ack()`'s order: SACK tagging, cumulative ACK
//! (`tcp_clean_rtx_queue`: RTT sample, `pkts_acked`), `in_ack_event` (after the cleanup,
//! as the trait documents and current kernels do), loss detection and the recovery state
//! machine (`tcp_fastretrans_alert`), the delivery-rate sample (`tcp_rate_gen`), then
//! `cong_control`, or PRR (`tcp_cwnd_reduction`) while in Recovery, or `cong_avoid` when
//! cwnd may grow (`tcp_cong_control`).
//!
//! One timer per sender, as Linux's `icsk_retransmit_timer`: the RTO or, while RACK waits
//! out the reordering window, the reorder timer (`ICSK_TIME_REO_TIMEOUT`), or the
//! tail-loss probe's timer (`ICSK_TIME_LOSS_PROBE`); either replaces the RTO until it
//! fires or the RTO is rearmed (`tcp_rearm_rto`). On RTO
//! (`tcp_retransmit_timer`), exponential backoff up to `rto_max`, cleared by a
//! valid RTT sample, and `tcp_enter_loss`. Idle restart (`tcp_cwnd_restart`, RFC
//! 2861-like): after an idle period longer than the RTO, cwnd restarts at min(cwnd,
//! initcwnd), halved per idle RTO.
//!
//! Differences from Linux worth knowing: time is kept in nanoseconds (no jiffies
//! rounding of the RTO; timestamps tick in microseconds, as with Linux's usec TS option),
//! no pacing, no TSO (every segment is one MSS on the wire; with `TcpConfig::psh` new
//! data is grouped into GSO packets to place PSH and to hold back, as
//! `tcp_tso_should_defer` does, a packet the window would cut short), no DSACK (RACK's
//! reordering window never widens) and no F-RTO (a spurious timeout is found only by
//! timestamps, after go-back-N has begun).

use super::handshake::SynSent;
use super::rack::{Rack, RackFeed};
use super::rate::{RateBuild, RateSampler};
use super::recovery::Recovery;
use super::rtt::{rtt_samples, AckedTimes, RttEstimator};
use super::scoreboard::{Scoreboard, LOST, RETRANS, SACKED};
use super::send_buffers::{Buffer, Progress, SendBuffers};
use super::tlp::{ProbeDeadline, Tlp};
use super::{Ack, Segment};
use crate::config::TcpConfig;
use crate::hist::Histogram;
use crate::output::{FlowSample, SampleRow};
use cclab_cc::{
    AckFlags, AckSample, Algorithm, CaEvent, CaState, CongestionControl, LossRecovery, RateSample,
    TcpState,
};
use cclab_units::{Duration, Time};
use std::sync::Arc;

/// When the retransmission timer fires, and as which of Linux's timers (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum TimerDeadline {
    Stopped,
    /// The RTO (`ICSK_TIME_RETRANS`).
    At(Time),
    /// RACK's reorder timer (`ICSK_TIME_REO_TIMEOUT`).
    Reorder(Time),
    /// The tail-loss probe's timer (`ICSK_TIME_LOSS_PROBE`).
    Probe(ProbeDeadline),
}

impl TimerDeadline {
    #[inline]
    pub(super) fn is_stopped(&self) -> bool {
        *self == TimerDeadline::Stopped
    }
    #[inline]
    pub(super) fn is_probe(&self) -> bool {
        matches!(self, TimerDeadline::Probe(_))
    }
    #[inline]
    pub(super) fn is_reorder(&self) -> bool {
        matches!(self, TimerDeadline::Reorder(_))
    }
}

/// What one pass of [`TcpSender::send_window`] sent.
struct Window {
    sent: u32,
    sent_new: u32,
    /// It stopped at the congestion window.
    cwnd_limited: bool,
    /// It resent the oldest outstanding segment.
    resent_head: bool,
}

impl Window {
    /// This pass followed by `later` (which stopped where the two stopped).
    fn then(self, later: Window) -> Window {
        Window {
            sent: self.sent + later.sent,
            sent_new: self.sent_new + later.sent_new,
            cwnd_limited: later.cwnd_limited,
            resent_head: self.resent_head | later.resent_head,
        }
    }
}

/// The GSO packet being built by [`TcpSender::send_window`]: its
/// segments go out as they come, except the last, which waits to learn whether it
/// ends a packet of more than one segment or a buffer marked to push (and so carries
/// PSH).
#[derive(Default)]
struct GsoPacket {
    last: Option<Segment>,
    len: u32,
    /// The most segments it may take: the GSO size, or less where its send-queue buffer
    /// ends (`tcp_mss_split_point`).
    room: u32,
    /// Where its buffer ends (exclusive), if that buffer is marked to push: a packet that
    /// ends there carries PSH whatever its length (`send_buffers.rs`).
    pushed_end: Option<u32>,
}

impl GsoPacket {
    fn add(&mut self, seg: Segment, out: &mut impl FnMut(Segment)) {
        if let Some(middle) = self.last.replace(seg) {
            out(middle);
        }
        self.len += 1;
    }

    /// Sends the packet's last segment; where the packet ends (exclusive), if it had any.
    fn end(&mut self, out: &mut impl FnMut(Segment)) -> Option<u32> {
        let len = std::mem::take(&mut self.len);
        let mut last = self.last.take()?;
        last.psh = len > 1 || self.pushed_end == Some(last.seq + 1);
        out(last);
        Some(last.seq + 1)
    }
}

/// Per-flow counters for reports.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Segments sent again (data, probes and SYNs).
    pub retransmits: u64,
    /// Payload bytes of the data segments among them (a SYN carries none, a finite
    /// transfer's last segment less than the MSS).
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    /// Tail-loss probes sent (Linux's `TCPLossProbes`).
    pub probes: u64,
    pub fast_recoveries: u64,
    pub undos: u64,
    pub rtt_us: Histogram,
    /// When the last byte of a finite transfer was acknowledged.
    pub completed_at: Option<Time>,
}

/// What one ACK delivered, gathered before the algorithm hears of it.
#[derive(Clone, Copy, Debug)]
struct AckDelivery {
    /// Segments newly acknowledged cumulatively (not SACKed before) and newly SACKed.
    acked: u32,
    newly_sacked: u32,
    /// Segments this ACK delivers as Linux counts them (`tp->delivered`'s increase; with
    /// duplicate ACKs standing in for SACKs without SACK).
    delivered: u32,
    /// The ACK advanced `snd_una`.
    advanced: bool,
}

/// A sender. The fields marked `pub(super)` are shared with the recovery state machine
/// in `recovery.rs`, which Linux keeps in the same file as ACK processing; nothing
/// outside the `tcp` module sees them.
#[derive(Clone, Debug)]
pub struct TcpSender {
    pub(super) ca: Algorithm,
    pub(super) tp: TcpState,
    pub(super) stats: SenderStats,
    /// Shared by every flow with the same settings (a running flow that changes one gets
    /// its own copy): with 100,000 flows a copy each cost 80 bytes per flow.
    cfg: Arc<TcpConfig>,
    flow: u32,
    /// Segments of a finite transfer (None: bulk) and the last one's payload.
    total_segs: Option<u32>,
    last_payload: u32,
    /// The application stopped giving data (the flow's stop time passed).
    app_closed: bool,
    /// Data may flow: the connection is established (or opened without a handshake).
    started: bool,
    /// The handshake under way (SYN-SENT), if any: boxed, as it lives a round trip.
    syn: Option<Box<SynSent>>,

    pub(super) board: Scoreboard,
    pub(super) rec: Recovery,
    pub(super) rack: Rack,
    pub(super) tlp: Tlp,
    rtt: RttEstimator,
    pub(super) rate: RateSampler,

    /// RTOs since snd_una last advanced (Linux `icsk_retransmits`).
    rtos_since_progress: u32,
    /// When the retransmission timer fires: the RTO, RACK's reorder timer or the
    /// tail-loss probe's.
    pub(super) timer: TimerDeadline,

    // cwnd validation (tcp_cwnd_validate).
    cwnd_usage_seq: u32,
    last_send: Time,
    /// The TSval of the latest ACK taken (RFC 7323 `TS.Recent`), echoed in each segment.
    ts_recent: Time,
    /// Segments the receiver window allows outstanding.
    rwnd_segs: u32,
    /// The largest window the receiver has offered, bytes (Linux `tp->max_window`; 0 while
    /// its ACKs carry none).
    max_window: u32,
    /// With GSO sending (`TcpConfig::psh`), the send queue's buffers, whose ends group
    /// segments into packets; boxed, as other senders have none.
    send_buffers: Option<Box<SendBuffers>>,
}

/// The loss recovery a flow uses: its `recovery` key, or else its algorithm's own. The
/// receiver needs it too: only a SACK flow's receiver compresses its ACKs.
pub fn recovery_style(cfg: &TcpConfig, ca: &Algorithm) -> LossRecovery {
    cfg.recovery.unwrap_or_else(|| ca.loss_recovery())
}

impl TcpSender {
    /// A sender for `flow` with algorithm `ca`; `bytes` is a finite transfer size (None: bulk).
    /// `cfg` may be shared with other senders (pass an `Arc`) or owned (a `TcpConfig`).
    pub fn new(
        flow: u32,
        ca: Algorithm,
        cfg: impl Into<Arc<TcpConfig>>,
        bytes: Option<u64>,
    ) -> TcpSender {
        let cfg = cfg.into();
        let mss = cfg.mss.max(1);
        let style = recovery_style(&cfg, &ca);
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
        tp.tick_phase_us = cfg.tick_phase.as_micros() as u32;
        TcpSender {
            ca,
            tp,
            stats: SenderStats::default(),
            rtt: RttEstimator::new(cfg.rto_initial),
            cfg,
            flow,
            total_segs,
            last_payload,
            app_closed: false,
            started: false,
            syn: None,
            board: Scoreboard::default(),
            rec: Recovery::new(style),
            rack: Rack::default(),
            tlp: Tlp::default(),
            rate: RateSampler::default(),
            rtos_since_progress: 0,
            timer: TimerDeadline::Stopped,
            cwnd_usage_seq: 0,
            last_send: Time::ZERO,
            ts_recent: Time::ZERO,
            rwnd_segs,
            max_window: 0,
            send_buffers: None,
        }
    }

    // ----- queries -----

    #[inline]
    pub fn snd_una(&self) -> u32 {
        self.board.snd_una()
    }
    #[inline]
    pub fn snd_nxt(&self) -> u32 {
        self.board.snd_nxt()
    }
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.board.packets_out()
    }
    #[inline]
    pub fn sacked_out(&self) -> u32 {
        self.board.sacked_out()
    }
    #[inline]
    pub fn lost_out(&self) -> u32 {
        self.board.lost_out()
    }
    #[inline]
    pub fn retrans_out(&self) -> u32 {
        self.board.retrans_out()
    }
    /// Linux `tcp_packets_in_flight`: packets_out - (sacked + lost) + retransmitted.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.board.in_flight()
    }
    #[inline]
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    /// The state the algorithm sees (cwnd, ssthresh, srtt, CA state, ...).
    #[inline]
    pub fn tp(&self) -> &TcpState {
        &self.tp
    }
    /// The algorithm.
    #[inline]
    pub fn ca(&self) -> &Algorithm {
        &self.ca
    }
    /// The algorithm, to change its parameters on a running flow.
    #[inline]
    pub fn ca_mut(&mut self) -> &mut Algorithm {
        &mut self.ca
    }
    /// Counters for reports.
    #[inline]
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// Where the oldest outstanding segment's record lies, which the next cumulative ACK
    /// reads first, and where the next new segment's record goes (for prefetching; None
    /// with nothing outstanding).
    #[inline]
    pub fn scoreboard_ends_address(&self) -> Option<(usize, usize)> {
        self.board.ends_address()
    }
    /// The sender's part of a time-series sample (window, RTT, flight, retransmits, the
    /// algorithm's variables): the one place a sample reads the sender, for the
    /// simulator and for cclab's TCP over UDP alike. The caller sets time, flow and the
    /// delivered bytes, which it counts its own way.
    pub fn fill_sample(&self, s: &mut FlowSample) {
        self.fill_numbers(s);
        s.cc.clear();
        self.ca.inspect(&mut |k, v| s.cc.push((k, v)));
    }
    /// The sender's numbers in a sample, without the algorithm's variables (which cost
    /// far more to ask for, and only series files read).
    pub fn fill_numbers(&self, s: &mut FlowSample) {
        let row = self.sample_row(s.flow, s.delivered_bytes);
        s.cwnd_pkts = row.cwnd_pkts;
        s.ssthresh_pkts = row.ssthresh_pkts;
        s.srtt = row.srtt;
        s.inflight_pkts = row.inflight_pkts;
        s.retransmits = row.retransmits;
    }
    /// The sender's numbers as a row of flow `flow`'s sample, with the bytes its receiver
    /// delivered.
    #[inline]
    pub fn sample_row(&self, flow: usize, delivered_bytes: u64) -> SampleRow {
        SampleRow {
            flow,
            cwnd_pkts: self.tp.snd_cwnd,
            ssthresh_pkts: self.tp.snd_ssthresh,
            srtt: Duration::from_micros(self.tp.srtt_us() as u64),
            inflight_pkts: self.in_flight(),
            delivered_bytes,
            retransmits: self.stats.retransmits,
        }
    }
    /// When the retransmission timer fires (the RTO, RACK's reorder timer or the
    /// tail-loss probe's; either way call [`on_rto`](Self::on_rto), then
    /// [`transmit`](Self::transmit)).
    #[inline]
    pub fn rto_deadline(&self) -> Option<Time> {
        match self.timer {
            TimerDeadline::Stopped => None,
            TimerDeadline::At(t) | TimerDeadline::Reorder(t) => Some(t),
            TimerDeadline::Probe(p) => Some(p.at(self.tp.hz)),
        }
    }
    /// [`rto_deadline`](Self::rto_deadline) if it is before `event` or there is no
    /// event: what an event loop that holds one timer event per flow, no later than the
    /// deadline, needs to know after each call. A probe timer's deadline is worked out
    /// only if a bound does not settle it.
    #[inline]
    pub fn rto_deadline_before(&self, event: Option<Time>) -> Option<Time> {
        if let (TimerDeadline::Probe(p), Some(e)) = (self.timer, event) {
            if p.not_before() >= e {
                return None;
            }
        }
        self.rto_deadline().filter(|&d| event.is_none_or(|e| d < e))
    }
    #[inline]
    pub fn recovery_style(&self) -> LossRecovery {
        self.rec.style()
    }
    /// All data of a finite transfer acknowledged.
    #[inline]
    pub fn is_complete(&self) -> bool {
        self.stats.completed_at.is_some()
    }
    #[inline]
    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }
    /// Payload bytes transmitted, retransmissions included: each new segment once, at its
    /// own size, and every retransmission's (the send rate's numerator).
    pub fn payload_bytes_sent(&self) -> u64 {
        let sent = u64::from(self.snd_nxt());
        let new_data = match self.total_segs {
            // The last segment, once sent, carries only what is left.
            Some(n) if sent >= u64::from(n) && n > 0 => {
                (u64::from(n) - 1) * u64::from(self.cfg.mss) + u64::from(self.last_payload)
            }
            _ => sent * u64::from(self.cfg.mss),
        };
        new_data + self.stats.retransmitted_bytes
    }
    #[inline]
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Data is there to send: the application has not stopped, a finite transfer is not
    /// all sent, and, with GSO sending, the application has written beyond what was sent.
    fn has_new_data(&self) -> bool {
        !self.app_closed
            && self.total_segs.is_none_or(|n| self.snd_nxt() < n)
            && self.send_buffers.as_ref().is_none_or(|b| self.snd_nxt() < b.written())
    }

    /// New data may go now as far as the data and the receiver window go (cwnd aside).
    pub(super) fn new_data_allowed(&self) -> bool {
        self.has_new_data() && self.packets_out() < self.rwnd_segs
    }

    /// Copies the sender's view into the state the algorithm reads.
    #[inline]
    pub(super) fn sync_tp(&mut self, now: Time) {
        self.tp.now_us = now.as_micros();
        self.tp.packets_in_flight = self.in_flight();
        self.tp.snd_una = self.snd_una();
        self.tp.snd_nxt = self.snd_nxt();
    }

    // ----- live settings -----

    /// Sets `rto_min` (takes effect at the next RTT sample, as `ip route ... rto_min`).
    pub fn set_rto_min(&mut self, d: Duration) {
        Arc::make_mut(&mut self.cfg).rto_min = d;
    }
    /// Sets `initcwnd`: used at the flow's start (if not started yet) and at the next
    /// restart after idle; a running flow's cwnd is not changed.
    pub fn set_init_cwnd(&mut self, segs: u32) {
        Arc::make_mut(&mut self.cfg).init_cwnd = segs.max(1);
        if !self.started {
            self.tp.snd_cwnd = self.cfg.init_cwnd;
        }
    }

    // ----- life cycle -----

    /// The application opens the connection at `now`: with a handshake if the
    /// configuration asks for one ([`connect`](Self::connect)), else data may flow at
    /// once ([`start`](Self::start)). The caller then calls [`transmit`](Self::transmit).
    pub fn open(&mut self, now: Time) {
        if self.cfg.handshake {
            self.connect(now);
        } else {
            self.start(now);
        }
    }

    /// `connect()`: a SYN is due, with the initial RTO on its timer; data waits for the
    /// SYN-ACK.
    pub fn connect(&mut self, now: Time) {
        self.syn = Some(Box::new(SynSent::new(now, self.cfg.rto_initial)));
    }

    /// Data may flow from `now` without a handshake: `init` hook, cwnd = initcwnd.
    pub fn start(&mut self, now: Time) {
        self.begin(now, self.cfg.init_cwnd.max(1));
    }

    /// The connection is established with an initial window of `cwnd` (Linux
    /// `tcp_init_transfer`, which sets it before `tcp_init_congestion_control`).
    fn begin(&mut self, now: Time, cwnd: u32) {
        self.started = true;
        self.tp.snd_cwnd = cwnd;
        if self.cfg.psh {
            self.send_buffers =
                Some(Box::new(SendBuffers::new(self.cfg.mss, cwnd, self.board.snd_una())));
        }
        self.sync_tp(now);
        self.ca.init(&mut self.tp);
    }

    /// The SYN-ACK echoing `tsecr` arrives in SYN-SENT: the first RTT sample seeds min
    /// RTT, srtt and the RTO (as `tcp_ack` does before `tcp_init_transfer`; the
    /// algorithm, initialised after, is not told of it), and data may flow.
    fn on_syn_ack(&mut self, now: Time, tsecr: Time) {
        let Some(syn) = self.syn.take() else { return };
        let e = syn.established(now, tsecr);
        self.rtt.update_min_rtt(&mut self.tp, now, e.rtt_us);
        self.rtt.on_sample(&mut self.tp.srtt_us, e.rtt_us, 0, 0, &self.cfg);
        self.set_rto_timer(None);
        self.begin(now, if e.cwnd_one { 1 } else { self.cfg.init_cwnd.max(1) });
    }

    /// The SYN's timer expired: retransmit it, or give up as `connect()` does
    /// (the flow then never sends).
    fn on_syn_timeout(&mut self) {
        let Some(syn) = &mut self.syn else { return };
        if syn.on_timeout(self.cfg.rto_max) {
            self.stats.timeouts += 1;
            self.stats.retransmits += 1;
        } else {
            self.syn = None;
        }
        self.set_rto_timer(None);
    }

    /// Sends the SYN if one is due and arms its timer.
    fn send_syn(&mut self, now: Time, out: &mut impl FnMut(Segment)) -> u32 {
        let Some(deadline) = self.syn.as_mut().and_then(|s| s.send_due(now)) else { return 0 };
        out(Segment::syn(self.flow, now));
        self.set_rto_timer(Some(deadline));
        1
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
        if !self.started {
            return self.send_syn(now, out);
        }
        if self.is_complete() {
            return 0;
        }
        self.sync_tp(now);
        if self.packets_out() == 0 && self.has_new_data() && self.last_send > Time::ZERO {
            self.maybe_restart_after_idle(now);
        }
        let probe = self.send_loss_probe(now, out);
        let gso = self.cfg.psh.then(|| cclab_cc::tcp::tso_segs(&self.tp));
        // Two calls of the inlined loop, so that the plain one is compiled knowing `gso` is
        // None and carries no GSO checks (nor the send buffers, which only GSO uses).
        let window = match gso {
            None => self.send_window(now, None, out),
            Some(max_segs) => {
                // The application has written before anything is sent (on the first call,
                // what fits the send buffer `tcp_init_buffer_space` sized). After the push,
                // `tcp_check_space` may wake it, and what it writes goes out with its own
                // push (`tcp_push` at the end of `tcp_sendmsg_locked`).
                self.application_writes();
                let window = self.send_window(now, Some(max_segs), out);
                if self.check_space() {
                    window.then(self.send_window(now, Some(max_segs), out))
                } else {
                    window
                }
            }
        };
        let Window { sent, sent_new, cwnd_limited, resent_head } = window;
        if sent > 0 {
            self.cwnd_validate(cwnd_limited);
        }
        if resent_head && !self.timer.is_reorder() {
            // Resending the oldest outstanding segment restarts the RTO, unless RACK's
            // reorder timer holds the timer (`tcp_xmit_retransmit_queue`, tcp_output.c):
            // its retransmission starts a new round trip, which on a path whose queue
            // grows can take longer than the RTO counted from the last ACK that advanced.
            self.set_rto_timer(Some(now + self.rto()));
        }
        self.arm_timer_after_sending(now, sent, sent_new);
        // tcp_rate_check_app_limited: not cwnd-limited and nothing more to send.
        if !cwnd_limited && !self.has_new_data() && self.board.next_lost().is_none() {
            self.rate.set_app_limited(self.tp.delivered, self.in_flight());
        }
        self.sync_tp(now);
        sent + probe
    }

    /// Sends lost segments, then new data, while the window allows. With `gso` (Linux's GSO
    /// sending, `TcpConfig::psh`), `tcp_write_xmit` (tcp_output.c) cuts new data into
    /// packets of at most that many segments ([`tso_segs`](cclab_cc::tcp::tso_segs), two at
    /// the testbed's rates), may hold back one that the window would cut short
    /// ([`tso_should_defer`](Self::tso_should_defer)), and `__tcp_transmit_skb` forces PSH
    /// on every packet of more than one segment, so that the receiver's GRO flushes it at
    /// once; GSO leaves the flag on the packet's last segment. So a pair ends with PSH, and
    /// a segment sent alone carries none unless it ends a buffer that the application's
    /// writes marked to push (`tcp_mark_push`, see `send_buffers.rs`). Retransmissions go
    /// out one segment at a time without PSH, as the kernel's do when SACK has cut its
    /// packets down to the lost segments; a lost packet resent whole (both segments of a
    /// pair lost) would carry PSH there.
    #[inline(always)]
    fn send_window(
        &mut self,
        now: Time,
        gso: Option<u32>,
        out: &mut impl FnMut(Segment),
    ) -> Window {
        let mut w = Window { sent: 0, sent_new: 0, cwnd_limited: false, resent_head: false };
        let mut packet = GsoPacket::default();
        loop {
            if self.in_flight() >= self.tp.snd_cwnd {
                w.cwnd_limited = true;
                break;
            }
            if let Some(seq) = self.board.next_lost() {
                self.end_packet(&mut packet, out);
                w.resent_head |= seq == self.snd_una();
                self.retransmit(now, seq, out);
            } else if self.new_data_allowed() {
                match gso {
                    None => self.send_new(now, out),
                    Some(max_segs) => {
                        if packet.len == packet.room {
                            self.end_packet(&mut packet, out);
                        }
                        if packet.len == 0 {
                            let buffer = self.buffer_at_next();
                            packet.room = max_segs.min(buffer.left);
                            packet.pushed_end = buffer.pushed.then(|| self.snd_nxt() + buffer.left);
                            // A buffer's last segment alone is never held back
                            // (`tcp_write_xmit` asks only for more than one).
                            if buffer.left > 1 {
                                if let Some(cwnd_limited) =
                                    self.tso_should_defer(now, max_segs, buffer)
                                {
                                    w.cwnd_limited |= cwnd_limited;
                                    break;
                                }
                            }
                        }
                        self.send_new(now, &mut |seg| packet.add(seg, out));
                    }
                }
                w.sent_new += 1;
            } else {
                break;
            }
            w.sent += 1;
        }
        self.end_packet(&mut packet, out);
        w
    }

    /// Linux `tcp_tso_should_defer` (tcp_output.c, as of "tcp: fix tcp_tso_should_defer()
    /// vs large RTT", 6.18): whether to hold back a GSO packet that the windows would cut
    /// below `max_segs` segments, so that the next ACK lets a fuller one out. It holds back
    /// only right after a send (within 1 ms) and only when the ACK of the oldest outstanding
    /// segment is due within min(1 ms, srtt / 2); then nothing goes until an ACK comes. In
    /// Some(cwnd_limited) if it holds back (`is_cwnd_limited` when cwnd, not the receiver
    /// window, is the smaller), None to send now. `buffer` is the send-queue buffer the
    /// packet would begin in (`send_buffers.rs`): the rest of one that is not the last
    /// written goes at once ("middle in queue"); the caller does not ask for a buffer's
    /// last segment alone, as `tcp_write_xmit` does not. The testbed's trace showed the
    /// rule at work: see docs/fidelity.md, "The kernel holds back" and "The kernel's send
    /// buffers, modelled".
    fn tso_should_defer(&self, now: Time, max_segs: u32, buffer: Buffer) -> Option<bool> {
        if self.tp.ca_state >= CaState::Recovery
            || now.saturating_since(self.last_send) > Duration::from_millis(1)
        {
            return None;
        }
        let cong_win = self.tp.snd_cwnd.saturating_sub(self.in_flight());
        let send_win = self.rwnd_segs.saturating_sub(self.packets_out());
        let limit = cong_win.min(send_win);
        // A full packet fits, or the rest of the data does (the last buffer, with its FIN,
        // or an earlier one that gets no more data).
        if limit >= max_segs || self.new_segments_left() <= limit {
            return None;
        }
        // "Middle in queue won't get any more data": the rest of a buffer that is not the
        // last one written goes whole.
        if !buffer.last && limit >= buffer.left {
            return None;
        }
        // `tcp_tso_win_divisor` (3): a third of the window is worth sending at once.
        if limit * 3 >= self.rwnd_segs.min(self.tp.snd_cwnd) {
            return None;
        }
        if self.packets_out() == 0 {
            return None;
        }
        let srtt_ns = 125 * u64::from(self.tp.srtt_us); // srtt_us holds srtt * 8
        let expected_ack = self.board.seg(self.snd_una()).sent() + srtt_ns;
        let threshold = (srtt_ns / 2).min(1_000_000);
        // Due later than that, the ACK would leave the window idle too long: send now.
        if expected_ack as i64 - now.0 as i64 > threshold as i64 {
            return None;
        }
        Some(cong_win < send_win)
    }

    /// With GSO sending, the application writes unless it waits for memory (see
    /// `send_buffers.rs`).
    fn application_writes(&mut self) {
        let (at, end) = (self.progress(), self.data_end());
        if let Some(b) = &mut self.send_buffers {
            b.write(at, end, self.max_window);
        }
    }

    /// Linux `tcp_check_space` after a push, with GSO sending: whether the application
    /// woke and wrote (see `send_buffers.rs`).
    fn check_space(&mut self) -> bool {
        let (at, end) = (self.progress(), self.data_end());
        let cwnd = self.tp.snd_cwnd;
        let cwnd_unfilled = self.board.in_flight() < cwnd;
        self.send_buffers
            .as_mut()
            .is_some_and(|b| b.check_space(at, cwnd, cwnd_unfilled, end, self.max_window))
    }

    fn progress(&self) -> Progress {
        Progress { snd_una: self.snd_una(), snd_nxt: self.snd_nxt() }
    }

    /// Ends the GSO packet being built: its last segment goes out, and the send queue
    /// counts it as an `skb` of its own.
    fn end_packet(&mut self, packet: &mut GsoPacket, out: &mut impl FnMut(Segment)) {
        if let (Some(end), Some(b)) = (packet.end(out), &mut self.send_buffers) {
            b.packet_sent(end);
        }
    }

    /// The send-queue buffer the next new segment lies in (one without end where the
    /// sender keeps no buffers).
    fn buffer_at_next(&mut self) -> Buffer {
        let seq = self.snd_nxt();
        match &mut self.send_buffers {
            Some(b) => b.buffer_at(seq),
            None => Buffer { left: u32::MAX, last: true, pushed: false },
        }
    }

    /// Segments of new data the application has still to be sent (u32::MAX for a bulk
    /// sender).
    fn new_segments_left(&self) -> u32 {
        self.data_end().map_or(u32::MAX, |end| end.saturating_sub(self.snd_nxt()))
    }

    /// Where the application's data ends: a finite transfer's last segment, what was sent
    /// once the application stopped, None for a bulk sender still writing.
    fn data_end(&self) -> Option<u32> {
        match self.total_segs {
            _ if self.app_closed => Some(self.snd_nxt()),
            n => n,
        }
    }

    fn maybe_restart_after_idle(&mut self, now: Time) {
        let idle = now.saturating_since(self.last_send);
        let rto = self.rto();
        if idle <= rto {
            return;
        }
        self.ca.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        self.tp.snd_ssthresh = self.current_ssthresh();
        let restart = self.cfg.init_cwnd.max(1).min(self.tp.snd_cwnd);
        let mut cwnd = self.tp.snd_cwnd;
        let mut left = idle.0 as i128 - rto.0 as i128;
        while left > 0 && cwnd > restart {
            cwnd >>= 1;
            left -= rto.0 as i128;
        }
        self.tp.snd_cwnd = cwnd.max(restart);
        self.tp.snd_cwnd_cnt = 0;
    }

    /// Counts data segment `seq` sent again (a retransmission or a probe).
    pub(super) fn count_resend(&mut self, seq: u32) {
        self.stats.retransmits += 1;
        self.stats.retransmitted_bytes += u64::from(self.payload_of(seq));
    }

    fn payload_of(&self, seq: u32) -> u32 {
        match self.total_segs {
            Some(n) if seq + 1 == n => self.last_payload,
            _ => self.cfg.mss,
        }
    }

    pub(super) fn stamp(&mut self, now: Time, seq: u32, out: &mut impl FnMut(Segment)) {
        let payload = self.payload_of(seq);
        out(Segment {
            flow: self.flow,
            seq,
            payload,
            wire_bytes: payload + self.cfg.header_bytes,
            tsval: now,
            tsecr: self.ts_recent,
            psh: false,
        });
        self.last_send = now;
        self.rec.on_sent(self.tp.ca_state);
    }

    pub(super) fn send_new(&mut self, now: Time, out: &mut impl FnMut(Segment)) {
        if self.in_flight() == 0 {
            self.ca.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let info = self.rate.on_send(now, self.packets_out(), self.tp.delivered);
        let seq = self.board.push(info);
        self.stamp(now, seq, out);
    }

    fn retransmit(&mut self, now: Time, seq: u32, out: &mut impl FnMut(Segment)) {
        let info = self.rate.on_send(now, self.packets_out(), self.tp.delivered);
        self.rack.on_retransmit(seq, self.retrans_out());
        self.board.retransmit(seq, info);
        self.count_resend(seq);
        self.rec.on_retransmit(now);
        self.stamp(now, seq, out);
    }

    /// Linux `tcp_cwnd_validate`: track whether cwnd limited sending in this window.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.snd_una() >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.packets_out() > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.packets_out();
            self.cwnd_usage_seq = self.snd_nxt();
        }
    }

    // ----- receiving ACKs -----

    /// Processes one ACK (Linux `tcp_ack`). The caller then calls [`transmit`](Self::transmit).
    pub fn on_ack(&mut self, now: Time, ack: &Ack) {
        self.ts_recent = self.ts_recent.max(ack.tsval);
        if !self.started {
            if ack.is_syn_ack() {
                self.on_syn_ack(now, ack.tsecr);
                self.max_window = self.max_window.max(ack.window);
            }
            return;
        }
        if ack.ack > self.snd_nxt() || ack.ack < self.snd_una() {
            return; // acknowledges unsent data, an old ACK or a duplicate SYN-ACK
        }
        // `tcp_ack_update_window`.
        self.max_window = self.max_window.max(ack.window);
        // `tp` is brought up to date after the delivery is taken, before the algorithm
        // first reads it (steps 1-2 read none of the fields `sync_tp` sets).
        let prior_in_flight = self.in_flight();
        let prior_lost = self.lost_out();
        let mut rb = RateBuild::default();
        let mut times = AckedTimes::default();

        // 1-2. SACK tagging, then the cumulative ACK (tcp_clean_rtx_queue).
        let d = self.take_delivery(now, ack, &mut rb, &mut times);
        let ca_rtt_us = self.take_rtt_sample(now, &times, d.advanced, ack.tsecr);
        self.sync_tp(now);
        if d.acked > 0 || d.newly_sacked > 0 {
            let sample = AckSample {
                pkts_acked: d.acked + d.newly_sacked,
                rtt_us: ca_rtt_us,
                in_flight: prior_in_flight,
            };
            self.ca.pkts_acked(&mut self.tp, &sample);
        }
        // 3. in_ack_event.
        let flags = AckFlags {
            slow_path: ack.n_sacks > 0 || !d.advanced,
            window_update: d.advanced,
            ece: false,
            acked_bytes: d.acked.saturating_mul(self.cfg.mss),
        };
        self.ca.in_ack_event(&mut self.tp, flags);
        self.process_tlp_ack(now, ack.ack, d.advanced, d.newly_sacked);

        if d.advanced {
            self.rtos_since_progress = 0;
        }

        // 4. Loss detection and the recovery state machine; then the timer is rearmed on
        // forward progress (the probe timer or the RTO, `tcp_set_xmit_timer`) unless RACK
        // armed its reorder timer.
        // Linux runs it only for a "dubious" ACK (`tcp_ack_is_dubious`). Here an ACK that
        // is not dubious skips RACK's scan (in Open an in-order ACK leaves no segment sent
        // before the latest delivered one), and the whole state machine when nothing is
        // SACKed, lost or counted as a duplicate; either changes nothing but the time.
        let dubious = !d.advanced || d.newly_sacked > 0 || self.tp.ca_state != CaState::Open;
        let reo_armed = self.fastretrans_alert(now, d.advanced, dubious, ack.tsecr);
        if d.advanced && !reo_armed {
            self.set_xmit_timer(now);
        }
        let newly_lost = self.lost_out().saturating_sub(prior_lost);

        // 5. Rate sample (tcp_rate_gen).
        let (delivered, interval_us) =
            self.rate.sample(now, &rb, self.tp.delivered, self.tp.min_rtt_us);
        let rs = RateSample {
            delivered,
            interval_us,
            rtt_us: ca_rtt_us,
            losses: newly_lost,
            acked_sacked: d.delivered,
            prior_in_flight,
            is_app_limited: rb.is_app_limited(),
        };

        // 6. cwnd update (tcp_cong_control).
        // Leaves `tp` in step with the scoreboard, which nothing after it changes.
        self.cong_control(now, &rs, &d, newly_lost);
        self.note_completion(now);
    }

    /// Steps 1 and 2 of an ACK: SACK tagging and the cumulative ACK, each delivered
    /// segment going to the rate sample and its send time to the RTT sample; then
    /// `tp->delivered` grows by what Linux counts as delivered.
    fn take_delivery(
        &mut self,
        now: Time,
        ack: &Ack,
        rb: &mut RateBuild,
        times: &mut AckedTimes,
    ) -> AckDelivery {
        let prior_una = self.snd_una();
        let (rack_on, prior_fack) = (self.rack_on(), self.board.sacked_end());
        let rate = &mut self.rate;
        let min_rtt_us = self.tp.min_rtt_us;
        let mut rack = rack_on.then_some(RackFeed::new(
            &mut self.rack,
            prior_fack,
            min_rtt_us,
            now,
            ack.tsecr,
        ));
        // An in-order ACK with no SACK blocks skips SACK tagging altogether.
        let newly_sacked = if ack.n_sacks > 0 && self.rec.style() == LossRecovery::Sack {
            self.board.tag_sacks(ack, &mut |seq, info| {
                times.newly_sacked(info.flags(), seq, info.sent());
                rate.on_delivered(&info, rb);
                if let Some(r) = &mut rack {
                    r.newly_sacked(seq, &info);
                }
            })
        } else {
            0
        };
        let mut seq = prior_una;
        let acked = self.board.clean(ack.ack, &mut |info| {
            times.cumulatively_acked(info.flags(), info.sent());
            if info.flags() & SACKED == 0 {
                rate.on_delivered(&info, rb);
                if let Some(r) = &mut rack {
                    r.cumulatively_acked(seq, &info);
                }
            }
            seq += 1;
        });
        let advanced = self.snd_una() > prior_una;
        let delivered = self.count_delivered(acked, newly_sacked, advanced);
        self.tp.delivered = self.tp.delivered.wrapping_add(delivered);
        if delivered > 0 {
            self.rate.delivered_at(now);
        }
        AckDelivery { acked, newly_sacked, delivered, advanced }
    }

    /// Feeds the ACK's RTT samples to min RTT, the estimator and the statistics; returns
    /// the sample the algorithm sees (`ca_rtt_us`).
    fn take_rtt_sample(
        &mut self,
        now: Time,
        times: &AckedTimes,
        advanced: bool,
        tsecr: Time,
    ) -> Option<u32> {
        let rtt = rtt_samples(now, times, advanced, tsecr);
        if let (Some(seq_rtt), Some(ca_rtt)) = (rtt.seq_rtt_us, rtt.ca_rtt_us) {
            self.rtt.update_min_rtt(&mut self.tp, now, ca_rtt);
            let (una, nxt) = (self.snd_una(), self.snd_nxt());
            self.rtt.on_sample(&mut self.tp.srtt_us, seq_rtt, una, nxt, &self.cfg);
            self.stats.rtt_us.record(ca_rtt);
        }
        rtt.ca_rtt_us.map(|r| r.min(u32::MAX as u64) as u32)
    }

    /// Linux `tcp_cong_control`: the algorithm's own `cong_control`, else PRR while the
    /// window is being reduced, else `cong_avoid` on in-order delivery.
    fn cong_control(&mut self, now: Time, rs: &RateSample, d: &AckDelivery, newly_lost: u32) {
        self.sync_tp(now);
        if !self.ca.cong_control(&mut self.tp, rs) {
            if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(d.delivered, newly_lost, d.advanced);
            } else if d.acked > 0 {
                // tcp_may_raise_cwnd: only on in-order delivery (FLAG_DATA_ACKED).
                self.ca.cong_avoid(&mut self.tp, d.delivered);
            }
        }
        self.tp.snd_cwnd = self.tp.snd_cwnd.max(1);
    }

    /// A finite transfer is complete once its last segment is acknowledged.
    fn note_completion(&mut self, now: Time) {
        if let Some(n) = self.total_segs {
            if self.snd_una() >= n && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(now);
                self.set_rto_timer(None);
            }
        }
    }

    // ----- the retransmission timer -----

    /// The retransmission timer fired: RACK's reorder timer (`tcp_rack_reo_timeout`), the
    /// probe timer (the probe goes with the next [`transmit`](Self::transmit)) or the RTO
    /// (Linux `tcp_retransmit_timer` → `tcp_enter_loss`).
    pub fn on_rto(&mut self, now: Time) {
        match self.rto_deadline() {
            Some(d) if d <= now => {}
            _ => return,
        }
        if !self.started {
            self.on_syn_timeout();
            return;
        }
        if self.packets_out() == 0 {
            self.set_rto_timer(None);
            return;
        }
        if self.timer.is_reorder() {
            self.on_reo_timeout(now);
            return;
        }
        if self.timer.is_probe() {
            self.tlp.fire();
            return;
        }
        self.stats.timeouts += 1;
        self.tlp.end_episode();
        self.sync_tp(now);
        let first_rto = self.rtos_since_progress == 0;
        self.rtos_since_progress += 1;
        self.enter_loss(now, first_rto);
        self.rtt.back_off(self.cfg.rto_max);
        self.set_rto_timer(Some(now + self.rto()));
        self.sync_tp(now);
    }

    /// Arms the retransmission timer as the RTO (Linux `ICSK_TIME_RETRANS`) to fire at
    /// `at`, or stops it.
    pub(super) fn set_rto_timer(&mut self, at: Option<Time>) {
        self.timer = at.map_or(TimerDeadline::Stopped, TimerDeadline::At);
    }

    /// Linux `tcp_rearm_rto`: the RTO from now; replacing the reorder or probe timer,
    /// from when the oldest outstanding segment was last sent (`tcp_rto_delta_us`), at
    /// least a jiffy away, or from now if that segment is about to be resent.
    pub(super) fn rearm_rto(&mut self, now: Time) {
        if self.packets_out() == 0 {
            self.set_rto_timer(None);
            return;
        }
        let rto = self.rto();
        let mut at = now + rto;
        if self.timer.is_reorder() || self.timer.is_probe() {
            let head = self.board.seg(self.snd_una());
            if head.flags() & (LOST | RETRANS) != LOST {
                let jiffy = Duration(1_000_000_000 / self.cfg.hz.max(1) as u64);
                at = (Time(head.sent()) + rto).max(now + jiffy);
            }
        }
        self.set_rto_timer(Some(at));
    }

    /// Checks the scoreboard's bookkeeping against a full recount and the window's basic
    /// bounds (for tests; O(window)).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.board.check(self.rec.style() == LossRecovery::Sack)?;
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
        Ok(())
    }
}
