//! TCP Vegas (L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a
//! Global Internet", IEEE JSAC 13(8), 1995), as Linux runs it in `net/ipv4/tcp_vegas.c`.
//!
//! Once per RTT Vegas compares the window with what the path holds without queueing:
//! `diff = cwnd (rtt - baseRTT) / baseRTT` estimates the packets this flow keeps queued,
//! with `rtt` the smallest RTT sample of the last round (filtering delayed ACKs) and
//! `baseRTT` the smallest ever. In congestion avoidance cwnd grows by one packet per RTT
//! when diff < alpha = 2, shrinks by one when diff > beta = 4, and holds in between. In
//! slow start, diff > gamma = 1 ends slow start with cwnd set to the rate actually
//! achieved (cwnd baseRTT/rtt + 1). Fewer than three RTT samples in a round, or recovery,
//! fall back to Reno. Loss handling is Reno's.
//!
//! Departure from Linux: Linux ends a round when an ACK passes `snd_nxt` saved at its
//! start. [`TcpState`] carries no sequence numbers, so [`RoundTracker`] counts deliveries
//! instead: a round ends once more packets were delivered than were delivered or in flight
//! at its start, which is the same event measured in packets.

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CaEvent, CaState, CongestionControl, TcpState};

/// Detects the end of a round trip from delivery counts (see the module doc). Shared by
/// the delay-based algorithms that act once per RTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTracker {
    /// `tp.delivered` value that, once exceeded, ends the round.
    end: u32,
}

impl RoundTracker {
    /// Starts a round now: it ends when everything sent so far has been delivered and one
    /// more packet after it.
    pub fn start(&mut self, tp: &TcpState) {
        self.end = tp.delivered.wrapping_add(tp.packets_in_flight);
    }

    /// Linux `after(ack, beg_snd_nxt)`.
    pub fn is_over(&self, tp: &TcpState) -> bool {
        (tp.delivered.wrapping_sub(self.end) as i32) > 0
    }
}

/// Linux `tcp_current_ssthresh`: in CWR or recovery the stored threshold; otherwise at
/// least three quarters of cwnd (so a later slow start does not stop too early).
pub fn current_ssthresh(tp: &TcpState) -> u32 {
    if matches!(tp.ca_state, CaState::Cwr | CaState::Recovery) {
        tp.snd_ssthresh
    } else {
        tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
    }
}

/// Tunables, with Linux's module-parameter names and defaults (all in packets queued).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Grow when fewer than this many packets are queued (Linux 2).
    pub alpha: u32,
    /// Shrink when more than this many packets are queued (Linux 4).
    pub beta: u32,
    /// Leave slow start when more than this many packets are queued (Linux 1).
    pub gamma: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { alpha: 2, beta: 4, gamma: 1 }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "alpha",
        2,
        0,
        10_000,
        "packets",
        "grow cwnd by 1 per RTT while fewer packets than this are queued",
    ),
    ParamSpec::int(
        "beta",
        4,
        0,
        10_000,
        "packets",
        "shrink cwnd by 1 per RTT while more packets than this are queued",
    ),
    ParamSpec::int(
        "gamma",
        1,
        0,
        10_000,
        "packets",
        "leave slow start when more packets than this are queued",
    ),
];

/// Per-flow state (Linux `struct vegas`). RTTs in microseconds, plus one so never zero.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Vegas adjustments on (off during recovery, until a fresh round).
    pub doing_vegas_now: bool,
    /// RTT samples in this round.
    pub cnt_rtt: u32,
    /// Smallest RTT of this round.
    pub min_rtt_us: u32,
    /// Smallest RTT ever (the propagation delay estimate).
    pub base_rtt_us: u32,
    /// Packets queued at the last decision (Vegas's Diff), for inspection.
    pub diff: u32,
    pub round: RoundTracker,
}

impl Default for State {
    fn default() -> Self {
        State {
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt_us: 0x7fff_ffff,
            base_rtt_us: 0x7fff_ffff,
            diff: 0,
            round: RoundTracker::default(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Vegas {
    cfg: Config,
    st: State,
}

impl Vegas {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "vegas",
        summary:
            "Vegas: keep between alpha=2 and beta=4 packets queued, adjusting cwnd by 1 per RTT",
        source: "Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Vegas {
        Vegas { cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    fn enable(&mut self, tp: &TcpState) {
        self.st.doing_vegas_now = true;
        self.st.round.start(tp);
        self.st.cnt_rtt = 0;
        self.st.min_rtt_us = 0x7fff_ffff;
    }
}

impl CongestionControl for Vegas {
    fn init(&mut self, tp: &mut TcpState) {
        self.st.base_rtt_us = 0x7fff_ffff;
        self.enable(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt_us else { return };
        let vrtt = rtt.saturating_add(1);
        self.st.base_rtt_us = self.st.base_rtt_us.min(vrtt);
        self.st.min_rtt_us = self.st.min_rtt_us.min(vrtt);
        self.st.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.st.doing_vegas_now = false;
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !self.st.doing_vegas_now {
            tcp::reno_cong_avoid(tp, acked);
            return;
        }
        if self.st.round.is_over(tp) {
            self.st.round.start(tp);
            if self.st.cnt_rtt <= 2 {
                // Too few samples to tell queueing from delayed ACKs.
                tcp::reno_cong_avoid(tp, acked);
            } else {
                let rtt = self.st.min_rtt_us as u64;
                let base = self.st.base_rtt_us as u64;
                let cwnd = tp.snd_cwnd as u64;
                let target_cwnd = cwnd * base / rtt;
                let diff = (cwnd * (rtt - base) / base) as u32;
                self.st.diff = diff;
                if diff > self.cfg.gamma && tcp::in_slow_start(tp) {
                    // Too fast for slow start: match the rate actually achieved.
                    tp.snd_cwnd = tp.snd_cwnd.min(target_cwnd as u32 + 1);
                    tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
                } else if tcp::in_slow_start(tp) {
                    tcp::slow_start(tp, acked);
                } else if diff > self.cfg.beta {
                    tp.snd_cwnd -= 1;
                    tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
                } else if diff < self.cfg.alpha {
                    tp.snd_cwnd += 1;
                }
                tp.snd_cwnd = tp.snd_cwnd.clamp(2, tp.snd_cwnd_clamp.max(2));
                tp.snd_ssthresh = current_ssthresh(tp);
            }
            self.st.cnt_rtt = 0;
            self.st.min_rtt_us = 0x7fff_ffff;
        } else if tcp::in_slow_start(tp) {
            tcp::slow_start(tp, acked);
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        match name {
            "alpha" => Some(self.cfg.alpha as f64),
            "beta" => Some(self.cfg.beta as f64),
            "gamma" => Some(self.cfg.gamma as f64),
            _ => None,
        }
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        match name {
            "alpha" => self.cfg.alpha = value as u32,
            "beta" => self.cfg.beta = value as u32,
            "gamma" => self.cfg.gamma = value as u32,
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        if self.st.base_rtt_us != 0x7fff_ffff {
            report("base_rtt_us", self.st.base_rtt_us as f64);
        }
        report("diff", self.st.diff as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = ssthresh;
        t.packets_in_flight = cwnd;
        t
    }

    /// A flow that has learnt baseRTT = `base_ms` from three samples.
    fn vegas(t: &mut TcpState, base_ms: u32) -> Vegas {
        let mut v = Vegas::default();
        v.init(t);
        for _ in 0..3 {
            v.pkts_acked(
                t,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: Some(base_ms * 1000 - 1),
                    in_flight: t.snd_cwnd,
                },
            );
        }
        v
    }

    /// One round from its start: every packet in flight is ACKed with an RTT of `rtt_ms`,
    /// then the next ACK ends the round and Vegas decides. Returns cwnd just before that
    /// deciding ACK.
    fn round(v: &mut Vegas, t: &mut TcpState, rtt_ms: u32) -> u32 {
        t.packets_in_flight = t.snd_cwnd;
        v.st.round.start(t);
        v.st.cnt_rtt = 0;
        v.st.min_rtt_us = 0x7fff_ffff;
        let ack = |v: &mut Vegas, t: &mut TcpState| {
            t.delivered += 1;
            v.pkts_acked(
                t,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: Some(rtt_ms * 1000 - 1),
                    in_flight: t.snd_cwnd,
                },
            );
            v.cong_avoid(t, 1);
        };
        for _ in 0..t.packets_in_flight {
            ack(v, t);
        }
        let before = t.snd_cwnd;
        ack(v, t);
        before
    }

    /// Congestion avoidance with baseRTT 100 ms and cwnd 20: an RTT of 100 ms (diff 0 <
    /// alpha) adds one packet at the round's end; 115 ms (diff 20*15/100 = 3, between alpha
    /// and beta) holds; 125 ms (diff 5 > beta) removes one.
    #[test]
    fn diff_thresholds_move_cwnd_by_one() {
        for (rtt, diff, after) in [(100, 0, 21), (115, 3, 20), (125, 5, 19)] {
            let mut t = tp(20, 10);
            let mut v = vegas(&mut t, 100);
            let before = round(&mut v, &mut t, rtt);
            assert_eq!(before, 20, "no change within the round");
            assert_eq!(v.st.diff, diff, "rtt {rtt}");
            assert_eq!(t.snd_cwnd, after, "rtt {rtt}");
        }
    }

    /// Slow start ends when more than gamma packets queue: cwnd becomes the achieved rate
    /// times baseRTT, plus one. Within the round slow start doubled 40 to 80; with RTT
    /// 125 ms against 100 the window becomes 80 * 100/125 + 1 = 65, and slow start is over.
    #[test]
    fn slow_start_exit_matches_actual_rate() {
        let mut t = tp(40, 1000);
        let mut v = vegas(&mut t, 100);
        let before = round(&mut v, &mut t, 125);
        assert_eq!(before, 80);
        assert_eq!(t.snd_cwnd, 65);
        assert!(!tcp::in_slow_start(&t), "cwnd {} ssthresh {}", t.snd_cwnd, t.snd_ssthresh);
        // With no queue (diff <= gamma) slow start goes on through the deciding ACK.
        let mut t = tp(40, 1000);
        let mut v = vegas(&mut t, 100);
        round(&mut v, &mut t, 100);
        assert_eq!(t.snd_cwnd, 81);
    }

    /// With two or fewer samples in a round (one ACK per RTT: delayed ACKs) Vegas cannot
    /// judge and behaves as Reno.
    #[test]
    fn too_few_samples_fall_back_to_reno() {
        let mut t = tp(20, 10);
        let mut v = vegas(&mut t, 100);
        t.packets_in_flight = 1;
        v.st.round.start(&t);
        v.st.cnt_rtt = 0;
        t.delivered += 2;
        t.snd_cwnd_cnt = 19;
        v.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_us: Some(200_000), in_flight: 1 });
        v.cong_avoid(&mut t, 1);
        assert_eq!(t.snd_cwnd, 21, "Reno's increment despite a doubled RTT");
    }

    /// During recovery Vegas is off and the window is Reno's; leaving recovery restarts it.
    #[test]
    fn reno_while_not_open() {
        let mut t = tp(20, 10);
        let mut v = vegas(&mut t, 100);
        v.set_state(&mut t, CaState::Recovery);
        for _ in 0..20 {
            v.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 21);
        v.set_state(&mut t, CaState::Open);
        assert!(v.st.doing_vegas_now);
        assert_eq!(v.st.cnt_rtt, 0);
    }
}
