//! TCP Veno (C. P. Fu, S. C. Liew, "TCP Veno: TCP Enhancement for Transmission over
//! Wireless Access Networks", IEEE JSAC 21(2), 2003), as Linux runs it in
//! `net/ipv4/tcp_veno.c`.
//!
//! Veno estimates the packets this flow keeps queued as Vegas does,
//! `N = cwnd - cwnd baseRTT/RTT`, and uses it to tell losses apart: a loss while N < beta
//! (3 packets) is taken as random (wireless) and cuts cwnd only to 4/5; a loss with a
//! queue built up is congestive and halves it. In congestion avoidance the window grows by
//! one packet per RTT while N < beta, and by one every other RTT once the queue builds.
//!
//! Integer arithmetic follows Linux: N is kept << 1 (`V_PARAM_SHIFT`), RTTs in microseconds
//! plus one. As in Linux the RTT used is the last ACK's (the per-round minimum is reset on
//! every ACK) and the sample count is never reset, so Veno decides from the third sample on.

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CaEvent, CaState, CongestionControl, TcpState};

/// Linux `V_PARAM_SHIFT`: N and beta are kept with one fractional bit.
const V_PARAM_SHIFT: u32 = 1;

/// Tunables. Linux's `beta` is a constant (3 << 1); here it may be changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Queued packets below which a loss counts as random (Linux 3). Kept with Linux's
    /// resolution of half a packet.
    pub beta: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config { beta: 3.0 }
    }
}

const PARAMS: &[ParamSpec] = &[ParamSpec::float(
    "beta",
    3.0,
    0.5,
    10_000.0,
    "packets",
    "queued packets below which a loss is taken as random (cwnd x 4/5 instead of x 1/2)",
)];

/// Per-flow state (Linux `struct veno`). RTTs in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub doing_veno_now: bool,
    /// RTT samples seen (never reset, as in Linux).
    pub cnt_rtt: u32,
    /// Smallest RTT since the last ACK processed.
    pub min_rtt_us: u32,
    /// Smallest RTT ever.
    pub base_rtt_us: u32,
    /// In the congestive state: whether the next RTT may grow cwnd.
    pub inc: bool,
    /// Estimated queued packets, << 1.
    pub diff: u32,
}

impl Default for State {
    fn default() -> Self {
        State {
            doing_veno_now: true,
            cnt_rtt: 0,
            min_rtt_us: 0x7fff_ffff,
            base_rtt_us: 0x7fff_ffff,
            inc: true,
            diff: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Veno {
    cfg: Config,
    /// beta << 1.
    beta: u32,
    st: State,
}

impl Default for Veno {
    fn default() -> Self {
        Veno::new(Config::default())
    }
}

fn beta_fixed(beta: f64) -> u32 {
    (beta * (1 << V_PARAM_SHIFT) as f64).round() as u32
}

impl Veno {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "veno",
        summary:
            "Veno: Reno that cuts to 4/5 on losses it judges random (fewer than 3 packets queued)",
        source: "Fu & Liew, IEEE JSAC 2003; Linux net/ipv4/tcp_veno.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Veno {
        Veno { beta: beta_fixed(cfg.beta), cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    /// Whether the last estimate says the network is congested (N >= beta).
    pub fn congestive(&self) -> bool {
        self.st.diff >= self.beta
    }
}

impl CongestionControl for Veno {
    fn init(&mut self, _tp: &mut TcpState) {
        self.st.base_rtt_us = 0x7fff_ffff;
        self.st.inc = true;
        self.st.doing_veno_now = true;
        self.st.min_rtt_us = 0x7fff_ffff;
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt_us else { return };
        let vrtt = rtt.saturating_add(1);
        self.st.base_rtt_us = self.st.base_rtt_us.min(vrtt);
        self.st.min_rtt_us = self.st.min_rtt_us.min(vrtt);
        self.st.cnt_rtt = self.st.cnt_rtt.saturating_add(1);
    }

    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.st.doing_veno_now = true;
            self.st.min_rtt_us = 0x7fff_ffff;
        } else {
            self.st.doing_veno_now = false;
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, mut acked: u32) {
        if !self.st.doing_veno_now {
            tcp::reno_cong_avoid(tp, acked);
            return;
        }
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if self.st.cnt_rtt <= 2 {
            tcp::reno_cong_avoid(tp, acked);
        } else {
            let rtt = self.st.min_rtt_us as u64;
            let cwnd = tp.snd_cwnd as u64;
            let target = ((cwnd * self.st.base_rtt_us as u64) << V_PARAM_SHIFT) / rtt;
            self.st.diff = ((cwnd << V_PARAM_SHIFT).saturating_sub(target)) as u32;
            let mut grow = true;
            if tcp::in_slow_start(tp) {
                acked = tcp::slow_start(tp, acked);
                grow = acked != 0;
            }
            if grow {
                if self.st.diff < self.beta {
                    // Non-congestive: Reno's one packet per RTT.
                    tcp::cong_avoid_ai(tp, tp.snd_cwnd, acked);
                } else if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                    // Congestive: one packet every other RTT.
                    if self.st.inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                        tp.snd_cwnd += 1;
                        self.st.inc = false;
                    } else {
                        self.st.inc = true;
                    }
                    tp.snd_cwnd_cnt = 0;
                } else {
                    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(acked);
                }
            }
            tp.snd_cwnd = tp.snd_cwnd.clamp(2, tp.snd_cwnd_clamp.max(2));
        }
        self.st.min_rtt_us = 0x7fff_ffff;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        if self.st.diff < self.beta {
            // Random loss: cut by a fifth.
            ((tp.snd_cwnd as u64 * 4 / 5) as u32).max(2)
        } else {
            (tp.snd_cwnd >> 1).max(2)
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        (name == "beta").then_some(self.cfg.beta)
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        if name == "beta" {
            self.cfg.beta = value;
            self.beta = beta_fixed(value);
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        if self.st.base_rtt_us != 0x7fff_ffff {
            report("base_rtt_us", self.st.base_rtt_us as f64);
        }
        report("diff", self.st.diff as f64 / (1 << V_PARAM_SHIFT) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        t
    }

    /// One ACK with an RTT of `rtt_us - 1` (Veno adds one).
    fn ack(v: &mut Veno, t: &mut TcpState, rtt_us: u32) {
        v.pkts_acked(
            t,
            &AckSample { pkts_acked: 1, rtt_us: Some(rtt_us - 1), in_flight: t.snd_cwnd },
        );
        v.cong_avoid(t, 1);
    }

    fn veno_with_base(t: &mut TcpState, base_us: u32) -> Veno {
        let mut v = Veno::default();
        v.init(t);
        for _ in 0..3 {
            v.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_us: Some(base_us - 1), in_flight: 1 });
        }
        // As after an ACK has been processed: the per-ACK minimum starts afresh.
        v.st.min_rtt_us = 0x7fff_ffff;
        v
    }

    /// The loss discrimination: with baseRTT 100 ms and cwnd 100, an RTT of 100 ms means
    /// nothing queued, so the loss is random and cwnd keeps 4/5 (80); at 110 ms,
    /// N = 100 - 100*100/110 = 9.1 packets queued (>= 3), so the loss is congestive and
    /// cwnd halves (50).
    #[test]
    fn beta_for_random_and_congestive_loss() {
        let mut t = tp(100);
        let mut v = veno_with_base(&mut t, 100_000);
        ack(&mut v, &mut t, 100_000);
        assert_eq!(v.st.diff, 0);
        t.snd_cwnd = 100;
        assert_eq!(v.ssthresh(&t), 80);

        let mut t = tp(100);
        let mut v = veno_with_base(&mut t, 100_000);
        ack(&mut v, &mut t, 110_000);
        assert_eq!(v.st.diff, 200 - 200 * 100_000 / 110_000, "N << 1 = 19 (9.5 packets)");
        assert!(v.congestive());
        assert_eq!(v.ssthresh(&t), 50);
        // The threshold is 3 packets: N = 2.5 (5 in the << 1 fixed point) is still random.
        let mut t = tp(100);
        let mut v = veno_with_base(&mut t, 100_000);
        ack(&mut v, &mut t, 102_564); // 200 - 20000000/102564 = 200 - 195 = 5
        assert_eq!(v.st.diff, 5);
        assert_eq!(v.ssthresh(&t), 80);
    }

    /// Growth: one packet per RTT when not congested, one every other RTT when congested.
    #[test]
    fn congestive_state_grows_every_other_rtt() {
        for (rtt, rounds, grew) in [(100_000, 4, 4), (110_000, 4, 2)] {
            let mut t = tp(50);
            let mut v = veno_with_base(&mut t, 100_000);
            for _ in 0..rounds {
                // Linux's counter needs cwnd ACKs to fill and one more to act on it.
                for _ in 0..=t.snd_cwnd {
                    ack(&mut v, &mut t, rtt);
                }
            }
            assert_eq!(t.snd_cwnd, 50 + grew, "rtt {rtt}");
        }
    }
}
