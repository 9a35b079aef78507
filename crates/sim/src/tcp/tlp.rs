//! The tail-loss probe (TLP, RFC 8985 section 7) as Linux 6.x sends it for SACK
//! connections (`net.ipv4.tcp_early_retrans = 3`, the default). A loss with nothing sent
//! after it gets no SACK that RACK could judge it by: without a probe it waits for the
//! RTO (at least 200 ms plus the RTT). Instead, about two smoothed RTTs after the last
//! transmission or forward progress, the sender sends one segment, new data if it has
//! any, else the highest one again; the ACK it draws lets SACK and RACK find the loss.
//!
//! - `tcp_schedule_loss_probe` (tcp_output.c): in Open or CWR, with SACK and data
//!   outstanding, the retransmission timer becomes the probe timer
//!   (`ICSK_TIME_LOSS_PROBE`) for the probe timeout: 2 srtt, plus `TCP_RTO_MIN` with one
//!   segment out (the receiver may be delaying its ACK), else plus `TCP_TIMEOUT_MIN`; 1 s
//!   (`TCP_TIMEOUT_INIT`) before any RTT sample; never later than the RTO would fire.
//!   Linux calls it after new data is sent (`tcp_write_xmit`, here
//!   [`TcpSender::arm_timer_after_sending`]) and, in place of `tcp_rearm_rto`, on an ACK
//!   that acknowledges data (`tcp_set_xmit_timer`, [`TcpSender::set_xmit_timer`]).
//!   The probe timer is re-armed about once per ACK, and its deadline is rarely needed:
//!   it is kept as what it is worked out from ([`ProbeDeadline`]), and the engine asks
//!   only whether it falls before the event it already holds for the flow, which a bound
//!   without the rounding to jiffies nearly always answers. An ACK's probe timer that
//!   new data replaces at once is never worked out, and a transmission that arms the
//!   probe timer skips the RTO that `tcp_event_new_data_sent` would arm for the probe
//!   to replace. The deadlines read are those of Linux's order.
//! - [`TcpSender::send_loss_probe`] is `tcp_send_loss_probe`: at most one probe
//!   outstanding (`tp->tlp_high_seq`); new data if the receiver window allows, sent
//!   whatever cwnd says; else the highest segment again, with `__tcp_retransmit_skb`,
//!   which neither marks it retransmitted nor counts it in `retrans_out` (see
//!   `Scoreboard::resend_as_probe`). Then the RTO, from now.
//! - [`TcpSender::process_tlp_ack`] is `tcp_process_tlp_ack` (tcp_input.c), run from
//!   `tcp_ack` after `in_ack_event` and before loss detection: an ACK beyond
//!   `tlp_high_seq` after a retransmitted probe means the probe repaired a loss, and cwnd
//!   is reduced once (`tcp_init_cwnd_reduction`, CWR, `tcp_end_cwnd_reduction`,
//!   `tcp_try_keep_open`); a duplicate ACK that neither advances nor SACKs anything
//!   means the original and the probe both arrived, no loss.
//!
//! Not modelled: DSACK (`FLAG_DSACK_TLP`; a receiver here answers a duplicate segment
//! with a plain duplicate ACK, which the pure-duplicate-ACK rule above reads the same
//! way); a probe held back because the previous copy is still in the host's queue
//! (`skb_still_in_host_queue`). The probe follows the `rack` key: a flow with
//! `rack = false` stands for RFC 6675 without RACK-TLP.

use super::sender::TimerDeadline;
use super::Segment;
use super::TcpSender;
use cclab_cc::CaState;
use cclab_units::{Duration, Time};

/// Linux `TCP_RTO_MIN` (200 ms), added to the probe timeout when one segment is out.
const RTO_MIN: Duration = Duration::from_millis(200);
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies), added otherwise.
const TIMEOUT_MIN_JIFFIES: u64 = 2;
/// Linux `TCP_TIMEOUT_INIT` (1 s): the probe timeout before any RTT sample.
const TIMEOUT_INIT: Duration = Duration::from_secs(1);

/// One flow's TLP state (Linux `tlp_high_seq`, `tlp_retrans`; the sender's
/// `TimerDeadline::Probe` says the retransmission timer is the probe timer).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tlp {
    /// `tp->tlp_high_seq`: `snd_nxt` when the outstanding probe was sent (None: no probe
    /// outstanding).
    high_seq: Option<u32>,
    /// `tp->tlp_retrans`: that probe resent a segment (not new data).
    retrans: bool,
    /// The probe timer fired: the next [`TcpSender::transmit`] sends the probe.
    due: bool,
}

/// The probe timer's deadline (`tcp_schedule_loss_probe`), kept as what it is worked out
/// from: nearly every ACK re-arms the timer, few of its deadlines are ever read, and
/// whether one falls before the event the engine holds for the flow is nearly always
/// settled by [`not_before`](Self::not_before), without rounding to jiffies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ProbeDeadline {
    /// When the timer was armed.
    from: Time,
    /// When the RTO would fire (`tcp_rto_delta_us`): the probe fires no later.
    rto_fires: Time,
    /// The smoothed RTT then (0 before any sample).
    srtt_us: u32,
    /// One segment was out.
    one_out: bool,
}

impl ProbeDeadline {
    /// The deadline, at the jiffy rate `hz`.
    pub(super) fn at(&self, hz: u32) -> Time {
        let rto_left =
            (self.rto_fires > self.from).then(|| self.rto_fires.saturating_since(self.from));
        self.from + probe_timeout(self.srtt_us, self.one_out, rto_left, hz)
    }

    /// A time the deadline is never before, without division: the probe timeout before
    /// its rounding up to jiffies and its allowance, or the RTO if sooner.
    #[inline]
    pub(super) fn not_before(&self) -> Time {
        let timeout = match self.srtt_us {
            0 => TIMEOUT_INIT,
            srtt => Duration::from_micros(2 * srtt as u64),
        };
        (self.from + timeout).min(self.rto_fires).max(self.from)
    }
}

impl Tlp {
    /// Ends the probe episode (Linux clears `tlp_high_seq` on a window reduction and on
    /// an RTO).
    #[inline]
    pub(super) fn end_episode(&mut self) {
        self.high_seq = None;
    }

    /// The probe timer fired.
    #[inline]
    pub(super) fn fire(&mut self) {
        self.due = true;
    }
}

/// The probe timeout (`tcp_schedule_loss_probe`): `srtt_us` is the smoothed RTT (0 before
/// any sample), `one_out` whether one segment is out, `rto_left` the time before the RTO
/// would fire, `hz` the jiffy rate.
fn probe_timeout(srtt_us: u32, one_out: bool, rto_left: Option<Duration>, hz: u32) -> Duration {
    let hz = hz.max(1) as u64;
    let jiffy_ns = 1_000_000_000 / hz;
    let jiffies = |d: Duration| d.as_nanos().div_ceil(jiffy_ns);
    let timeout = if srtt_us > 0 {
        let two_srtt = jiffies(Duration::from_micros(2 * srtt_us as u64));
        let allowance = if one_out { jiffies(RTO_MIN) } else { TIMEOUT_MIN_JIFFIES };
        two_srtt + allowance
    } else {
        jiffies(TIMEOUT_INIT)
    };
    // The RTO bounds the timeout only if it fires sooner (in jiffies, rounded up: never
    // if it is at least the timeout away, the common case, which saves a division).
    let timeout_ns = timeout * jiffy_ns;
    match rto_left.map(|l| l.as_nanos()) {
        Some(left) if left > 0 && left < timeout_ns => Duration(left.div_ceil(jiffy_ns) * jiffy_ns),
        _ => Duration(timeout_ns),
    }
}

impl TcpSender {
    /// The flow sends tail-loss probes: RACK is on (which needs SACK) and TLP too.
    #[inline]
    pub(super) fn tlp_on(&self) -> bool {
        self.config().tlp && self.rack_on()
    }

    /// `tcp_schedule_loss_probe`'s condition: in Open or CWR, with data outstanding.
    #[inline]
    fn may_probe(&self) -> bool {
        self.tlp_on()
            && self.packets_out() > 0
            && matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
    }

    /// Linux `tcp_set_xmit_timer`, for an ACK that acknowledged data and did not arm
    /// RACK's reorder timer: the probe timer if the flow may probe (its RTO would be
    /// rearmed from now, so the probe fires within a whole RTO), else the RTO.
    pub(super) fn set_xmit_timer(&mut self, now: Time) {
        if self.may_probe() {
            self.arm_probe_timer(now, now + self.rto());
        } else {
            self.rearm_rto(now);
        }
    }

    /// Arms the retransmission timer after a transmission of `sent` segments, `sent_new`
    /// of them new data: the RTO if the timer is stopped; after new data, Linux's
    /// `tcp_event_new_data_sent` turns a probe timer back into the RTO (from the oldest
    /// outstanding segment) and `tcp_write_xmit`'s `tcp_schedule_loss_probe` then arms
    /// the probe timer if the flow may probe, which replaces whatever was armed before.
    // Always inlined: the event loop is compiled twice (with and without the packet
    // log), and with two callers the compiler stopped inlining it (docs/performance.md).
    #[inline(always)]
    pub(super) fn arm_timer_after_sending(&mut self, now: Time, sent: u32, sent_new: u32) {
        if sent_new > 0 && self.may_probe() {
            let head_sent = Time(self.board.seg(self.snd_una()).sent());
            self.arm_probe_timer(now, head_sent + self.rto());
            return;
        }
        if sent > 0 && self.timer.is_stopped() {
            self.set_rto_timer(Some(now + self.rto()));
        }
        if sent_new > 0 && self.timer.is_probe() {
            self.rearm_rto(now);
        }
    }

    /// The retransmission timer becomes the probe timer (`ICSK_TIME_LOSS_PROBE`), armed
    /// at `now`; the RTO it stands in for would fire at `rto_fires`.
    fn arm_probe_timer(&mut self, now: Time, rto_fires: Time) {
        self.set_rto_timer(None);
        self.timer = TimerDeadline::Probe(ProbeDeadline {
            from: now,
            rto_fires,
            srtt_us: self.tp.srtt_us(),
            one_out: self.packets_out() == 1,
        });
    }

    /// Sends the probe if its timer fired (`tcp_send_loss_probe`). Returns the segments
    /// sent (0 or 1).
    pub(super) fn send_loss_probe(&mut self, now: Time, out: &mut impl FnMut(Segment)) -> u32 {
        if !std::mem::take(&mut self.tlp.due) {
            return 0;
        }
        if self.tlp.high_seq.is_some() || self.packets_out() == 0 {
            self.rearm_rto(now); // at most one probe outstanding
            return 0;
        }
        self.tlp.retrans = !self.new_data_allowed();
        if self.tlp.retrans {
            self.resend_as_probe(now, self.snd_nxt() - 1, out);
        } else {
            self.send_new(now, out);
        }
        self.tlp.high_seq = Some(self.snd_nxt());
        self.stats.probes += 1;
        // The probe timer is spent: the RTO runs from now.
        self.set_rto_timer(None);
        self.rearm_rto(now);
        1
    }

    /// `tcp_process_tlp_ack` for an ACK of `ack` that `advanced` snd_una and newly SACKed
    /// `newly_sacked` segments.
    pub(super) fn process_tlp_ack(
        &mut self,
        now: Time,
        ack: u32,
        advanced: bool,
        newly_sacked: u32,
    ) {
        let Some(high) = self.tlp.high_seq else { return };
        if ack < high {
            return;
        }
        if !self.tlp.retrans {
            self.tlp.end_episode(); // a probe of new data acknowledged
        } else if ack > high {
            // The probe repaired a loss: reduce cwnd once (the reduction ends the
            // episode).
            self.sync_tp(now);
            self.init_cwnd_reduction(now);
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if !advanced && newly_sacked == 0 {
            self.tlp.end_episode(); // both copies arrived: no loss
        }
    }

    /// Sends segment `seq` again as the probe.
    fn resend_as_probe(&mut self, now: Time, seq: u32, out: &mut impl FnMut(Segment)) {
        let info = self.rate.on_send(now, self.packets_out(), self.tp.delivered);
        self.board.resend_as_probe(seq, info);
        self.count_resend(seq);
        self.stamp(now, seq, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::tcp::Ack;
    use cclab_cc::Algorithm;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_probe_timeout_is_two_srtt_plus_an_allowance_within_the_rto() {
        let ms = Duration::from_millis;
        // 2 x 20 ms + 2 jiffies.
        assert_eq!(probe_timeout(20_000, false, Some(ms(300)), 1000), ms(42));
        // One segment out: the receiver may delay its ACK, so TCP_RTO_MIN is added.
        assert_eq!(probe_timeout(20_000, true, Some(ms(300)), 1000), ms(240));
        // Never after the RTO; before any RTT sample, 1 s.
        assert_eq!(probe_timeout(20_000, true, Some(ms(230)), 1000), ms(230));
        assert_eq!(probe_timeout(0, false, Some(ms(3000)), 1000), ms(1000));
        // Rounded up to jiffies (HZ 250: 4 ms), an RTO already due does not bound it.
        assert_eq!(probe_timeout(10_100, false, None, 250), ms(24 + 8));
        assert_eq!(probe_timeout(10_000, false, Some(Duration::ZERO), 1000), ms(22));
    }

    #[test]
    fn the_bound_on_a_probe_deadline_is_never_after_it() {
        // Random deadlines (a seeded xorshift), HZ 1000 and 250: the bound the engine
        // trusts is at most the deadline, and usually within a few jiffies of it.
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut close = 0;
        for i in 0..100_000 {
            let from = Time(next(1 << 40));
            let p = ProbeDeadline {
                from,
                rto_fires: Time(from.0 + next(2_000_000_000)).max(Time(next(1 << 40))),
                srtt_us: if i % 50 == 0 { 0 } else { next(400_000) as u32 },
                one_out: i % 7 == 0,
            };
            let hz = if i % 2 == 0 { 1000 } else { 250 };
            let (lo, at) = (p.not_before(), p.at(hz));
            assert!(lo <= at, "{p:?} at HZ {hz}: {lo:?} > {at:?}");
            close += (at.saturating_since(lo) <= Duration::from_millis(12)) as u32;
        }
        assert!(close > 50_000, "{close}");
    }

    fn sender(tlp: bool, bytes: Option<u64>) -> TcpSender {
        let cfg = TcpConfig { tlp, handshake: false, ..TcpConfig::default() };
        let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, bytes);
        s.start(Time::ZERO);
        s
    }

    fn sent_by(s: &mut TcpSender, now: Time) -> Vec<u32> {
        let mut v = vec![];
        s.transmit(now, &mut |seg| v.push(seg.seq));
        v
    }

    /// The sender's timer fires at its deadline; returns what it then sends.
    fn fire(s: &mut TcpSender) -> (Time, Vec<u32>) {
        let at = s.rto_deadline().unwrap();
        s.on_rto(at);
        (at, sent_by(s, at))
    }

    #[test]
    fn a_lost_tail_is_probed_with_the_last_segment_and_repaired_once() {
        // Ten segments, the last two lost: the ACK of 0..8 arrives 50 ms later, and the
        // probe timer is 2 x srtt + 2 ms from it.
        let mut s = sender(true, Some(10 * 1448));
        assert_eq!(sent_by(&mut s, Time::ZERO).len(), 10);
        s.on_ack(Time(50 * MS), &Ack::hand_made(8, &[], Time::ZERO));
        assert!(sent_by(&mut s, Time(50 * MS)).is_empty());
        assert!(s.timer.is_probe());
        assert_eq!(s.rto_deadline(), Some(Time(152 * MS)));
        // The probe resends segment 9, without marking it lost or retransmitted.
        let (at, probe) = fire(&mut s);
        assert_eq!(probe, vec![9]);
        assert_eq!(
            (s.stats().probes, s.stats().timeouts, s.lost_out(), s.retrans_out()),
            (1, 0, 0, 0)
        );
        assert_eq!(s.tlp.high_seq, Some(10));
        assert_eq!(s.rto_deadline(), Some(at + s.rto()), "the RTO, from the probe");
        // Its ACK SACKs 9 above the hole at 8: RACK marks 8 lost, Recovery resends it.
        s.on_ack(at + Duration::from_millis(50), &Ack::hand_made(8, &[(9, 10)], Time::ZERO));
        assert_eq!(s.tp().ca_state, CaState::Recovery);
        assert_eq!(s.tlp.high_seq, None, "Recovery ends the probe episode");
        assert_eq!(sent_by(&mut s, at + Duration::from_millis(50)), vec![8]);
        s.check_invariants().unwrap();
    }

    #[test]
    fn a_second_probe_waits_for_the_first_to_be_answered() {
        let mut s = sender(true, Some(5 * 1448));
        sent_by(&mut s, Time::ZERO);
        s.on_ack(Time(50 * MS), &Ack::hand_made(3, &[], Time::ZERO));
        let (_, first) = fire(&mut s);
        assert_eq!(first, vec![4]);
        // The probe is lost too: the RTO fires, not a second probe.
        let (_, after) = fire(&mut s);
        assert_eq!(s.stats().probes, 1);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(after, vec![3], "the RTO's go-back-N starts at the head");
    }

    #[test]
    fn a_probe_sends_new_data_when_the_receiver_window_allows() {
        // An application-limited bulk flow with ten segments out: the probe is new data.
        let mut s = sender(true, None);
        assert_eq!(sent_by(&mut s, Time::ZERO).len(), 10);
        s.on_ack(Time(50 * MS), &Ack::hand_made(2, &[], Time::ZERO));
        sent_by(&mut s, Time(50 * MS)); // cwnd allows more: ten more go, the timer moves
        let (_, probe) = fire(&mut s);
        assert_eq!(probe, vec![s.snd_nxt() - 1]);
        assert!(!s.tlp.retrans);
        // Its ACK ends the episode without a reduction.
        let cwnd = s.tp().snd_cwnd;
        let all = s.snd_nxt();
        s.on_ack(Time(400 * MS), &Ack::hand_made(all, &[], Time::ZERO));
        assert_eq!((s.tlp.high_seq, s.tp().snd_cwnd > cwnd), (None, true));
    }

    /// Ten segments out, a retransmitted probe of segment 5 outstanding with
    /// `tlp_high_seq` 6 (as if 6..10 had been sent after the probe), cwnd 20.
    fn probe_outstanding() -> TcpSender {
        let mut s = sender(true, None);
        sent_by(&mut s, Time::ZERO);
        s.tp.snd_cwnd = 20;
        s.tlp = Tlp { high_seq: Some(6), retrans: true, ..Tlp::default() };
        s
    }

    #[test]
    fn an_ack_beyond_a_repaired_tail_reduces_cwnd_once() {
        let mut s = probe_outstanding();
        s.on_ack(Time(50 * MS), &Ack::hand_made(7, &[], Time::ZERO));
        // Reno's ssthresh is half of cwnd; CWR is left at once, cwnd = ssthresh.
        assert_eq!((s.tp().snd_ssthresh, s.tp().snd_cwnd), (10, 10));
        assert_eq!((s.tp().ca_state, s.tlp.high_seq), (CaState::Open, None));
        s.check_invariants().unwrap();
    }

    #[test]
    fn a_duplicate_ack_at_the_probe_ends_the_episode_without_a_reduction() {
        // An ACK below tlp_high_seq, or one that SACKs something, says nothing yet.
        let mut s = probe_outstanding();
        s.on_ack(Time(50 * MS), &Ack::hand_made(5, &[], Time::ZERO));
        assert_eq!(s.tlp.high_seq, Some(6));
        let mut s = probe_outstanding();
        s.on_ack(Time(50 * MS), &Ack::hand_made(6, &[], Time::ZERO));
        s.on_ack(Time(51 * MS), &Ack::hand_made(6, &[(8, 9)], Time::ZERO));
        assert_eq!(s.tlp.high_seq, Some(6), "an ACK that advances or SACKs is no duplicate");
        // A pure duplicate: the original and the probe both arrived.
        s.on_ack(Time(52 * MS), &Ack::hand_made(6, &[(8, 9)], Time::ZERO));
        assert_eq!(s.tlp.high_seq, None);
        assert_eq!(s.tp().snd_ssthresh, cclab_cc::tcp::INFINITE_SSTHRESH);
    }

    #[test]
    fn without_tlp_the_tail_waits_for_the_rto() {
        let mut s = sender(false, Some(10 * 1448));
        sent_by(&mut s, Time::ZERO);
        s.on_ack(Time(50 * MS), &Ack::hand_made(8, &[], Time::ZERO));
        assert!(!s.timer.is_probe());
        let (at, sent) = fire(&mut s);
        assert_eq!(at, Time(50 * MS) + s.config().rto_min + Duration::from_millis(50));
        assert_eq!((sent, s.stats().probes, s.stats().timeouts), (vec![8], 0, 1), "cwnd 1");
    }
}
