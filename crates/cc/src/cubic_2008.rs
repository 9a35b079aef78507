//! CUBIC as the 2008 paper gives it: Algorithm 1 ("Linux CUBIC algorithm (v2.2)") of Ha,
//! Rhee and Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", ACM SIGOPS OSR 42(5),
//! 2008, in floating point, line by line:
//!
//! - beta = 0.2 is the *decrease* (cwnd -> 0.8 cwnd, (3.6)); C = 0.4;
//! - loss: epoch_start = 0; fast convergence W_last_max = cwnd (2 - beta) / 2 when cwnd <
//!   W_last_max, else cwnd (3.7); ssthresh = cwnd = cwnd (1 - beta);
//! - timeout: cubic_reset() (all state to zero);
//! - each ACK: dMin = min RTT; slow start while cwnd <= ssthresh (cwnd + 1); else cnt =
//!   cubic_update(), and cwnd + 1 once cwnd_cnt > cnt;
//! - cubic_update (3.2): at the epoch start K = cbrt((W_last_max - cwnd) / C), origin =
//!   W_last_max (or K = 0, origin = cwnd), W_tcp = cwnd; t = now + dMin - epoch_start;
//!   target = origin + C (t - K)^3; cnt = cwnd / (target - cwnd), or 100 cwnd;
//! - cubic_tcp_friendliness (3.3): W_tcp += 3 beta / (2 - beta) * ack_cnt / cwnd; when
//!   W_tcp > cwnd, cnt <= cwnd / (W_tcp - cwnd).
//!
//! The paper's K in Algorithm 1 uses W_last_max - cwnd, not W_max beta (Eq. 2); we follow
//! the algorithm (as TCPTuner's authors note, it is what Linux does). Each ACKed packet is
//! one "ACK" of the pseudo-code. No 1.5x cap, no cap of 20 before the first loss, no
//! HyStart: those came to Linux later.

use crate::cubic_knobs::CubicKnobs;
use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{AckSample, CaState, CongestionControl, TcpState};

pub const CUBIC2008_PARAMS: &[ParamSpec] = &[
    ParamSpec::float_open_min(
        "beta",
        0.2,
        0.0,
        1.0,
        "",
        "window decrease at a loss: cwnd -> (1 - beta) cwnd",
    ),
    ParamSpec::float_open_min("c", 0.4, 0.0, 10.0, "segments/s^3", "C, the cubic's scale"),
    ParamSpec::switch("fast_convergence", true, "(3.7) fast convergence"),
    ParamSpec::switch("tcp_friendliness", true, "(3.3) TCP-friendly region"),
];

/// Algorithm 1's state (cubic_reset() zeroes it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State2008 {
    pub w_last_max: f64,
    /// Epoch start, seconds (0: none).
    pub epoch_start: f64,
    pub origin_point: f64,
    /// Minimum RTT, seconds (0: none).
    pub d_min: f64,
    pub w_tcp: f64,
    pub k: f64,
    pub ack_cnt: f64,
    pub cnt: f64,
}

#[derive(Clone, Debug)]
pub struct Cubic2008 {
    /// beta, C and the two switches.
    pub knobs: CubicKnobs,
    pub st: State2008,
    /// C was changed since the last ACK (see `apply_param`).
    pub c_changed: bool,
}

impl Default for Cubic2008 {
    fn default() -> Self {
        Cubic2008 { knobs: CubicKnobs::with_beta(0.2), st: State2008::default(), c_changed: false }
    }
}

impl Cubic2008 {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "cubic-2008",
        summary: "CUBIC as Algorithm 1 of the 2008 paper (v2.2): beta = 0.2 decrease, C = 0.4, floating point",
        source: "Ha, Rhee, Xu, ACM SIGOPS OSR 42(5) 2008, Algorithm 1",
        params: CUBIC2008_PARAMS,
    };

    /// cubic_update() (3.2) at time `now` seconds.
    fn update(&mut self, cwnd: f64, now: f64) -> f64 {
        let s = &mut self.st;
        if std::mem::take(&mut self.c_changed) && cwnd < s.origin_point {
            s.epoch_start = 0.0;
        }
        s.ack_cnt += 1.0;
        if s.epoch_start <= 0.0 {
            s.epoch_start = now;
            if cwnd < s.w_last_max {
                s.k = ((s.w_last_max - cwnd) / self.knobs.c).cbrt();
                s.origin_point = s.w_last_max;
            } else {
                s.k = 0.0;
                s.origin_point = cwnd;
            }
            s.ack_cnt = 1.0;
            s.w_tcp = cwnd;
        }
        let t = now + s.d_min - s.epoch_start;
        let target = s.origin_point + self.knobs.c * (t - s.k).powi(3);
        s.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100.0 * cwnd };
        if self.knobs.tcp_friendliness {
            // (3.3)
            s.w_tcp += 3.0 * self.knobs.beta / (2.0 - self.knobs.beta) * s.ack_cnt / cwnd;
            s.ack_cnt = 0.0;
            if s.w_tcp > cwnd {
                let max_cnt = cwnd / (s.w_tcp - cwnd);
                if s.cnt > max_cnt {
                    s.cnt = max_cnt;
                }
            }
        }
        s.cnt
    }
}

impl CongestionControl for Cubic2008 {
    /// "Packet loss": (3.7) then ssthresh = cwnd (1 - beta) (the sender sets cwnd to it).
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd as f64;
        self.st.epoch_start = 0.0;
        self.st.w_last_max = if cwnd < self.st.w_last_max && self.knobs.fast_convergence {
            cwnd * (2.0 - self.knobs.beta) / 2.0
        } else {
            cwnd
        };
        ((cwnd * (1.0 - self.knobs.beta)) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        let now = tp.now_us as f64 / 1e6;
        for _ in 0..acked {
            if tp.snd_cwnd <= tp.snd_ssthresh {
                tp.snd_cwnd = tp.snd_cwnd.saturating_add(1).min(tp.snd_cwnd_clamp);
            } else {
                let cnt = self.update(tp.snd_cwnd as f64, now);
                if tp.snd_cwnd_cnt as f64 > cnt {
                    tp.snd_cwnd = tp.snd_cwnd.saturating_add(1).min(tp.snd_cwnd_clamp);
                    tp.snd_cwnd_cnt = 0;
                } else {
                    tp.snd_cwnd_cnt += 1;
                }
            }
        }
    }

    /// "Timeout": cubic_reset().
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.st = State2008::default();
        }
    }

    /// "On each ACK": dMin.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt_us {
            let rtt = rtt as f64 / 1e6;
            self.st.d_min = if self.st.d_min > 0.0 { self.st.d_min.min(rtt) } else { rtt };
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        CUBIC2008_PARAMS
    }
    fn param(&self, name: &str) -> Option<f64> {
        self.knobs.get(name)
    }
    fn apply_param(&mut self, name: &str, value: f64) {
        let c = self.knobs.c;
        self.knobs.set(name, value);
        // A C changed below the epoch's plateau ends the epoch (at the next ACK, which
        // knows the cwnd): the next starts from there with K computed with the new C, as
        // `cubic` does (`CubicCore::update` says why).
        if self.knobs.c != c {
            self.c_changed = true;
        }
    }
    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("w_max", self.st.w_last_max);
        report("k", self.st.k);
        report("origin", self.st.origin_point);
        report("tcp_cwnd", self.st.w_tcp);
        report("cnt", self.st.cnt);
        report("delay_min_us", self.st.d_min * 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::tests::ca_state;

    #[test]
    fn decrease_is_to_0_8_with_fast_convergence_0_9() {
        let mut c = Cubic2008::default();
        let mut tp = ca_state(1000);
        assert_eq!(c.ssthresh(&tp), 800);
        assert_eq!(c.st.w_last_max, 1000.0);
        tp.snd_cwnd = 900;
        assert_eq!(c.ssthresh(&tp), 720);
        assert!((c.st.w_last_max - 810.0).abs() < 1e-9);
    }

    #[test]
    fn k_and_target_follow_the_closed_form() {
        let mut c = Cubic2008 {
            knobs: CubicKnobs { tcp_friendliness: false, ..CubicKnobs::with_beta(0.2) },
            ..Default::default()
        };
        c.st.w_last_max = 1000.0;
        c.update(800.0, 10.0);
        assert!((c.st.k - (200.0f64 / 0.4).cbrt()).abs() < 1e-12);
        // At t = K the target is the plateau: cnt = 800 / 200 = 4.
        let cnt = c.update(800.0, 10.0 + c.st.k);
        assert!((cnt - 4.0).abs() < 1e-9, "{cnt}");
    }

    #[test]
    fn tcp_friendly_region_bounds_cnt() {
        let mut c = Cubic2008::default();
        c.st.w_last_max = 12.0;
        let mut tp = ca_state(10);
        tp.now_us = 1_000_000;
        for _ in 0..10_000 {
            c.cong_avoid(&mut tp, 1);
        }
        // W_tcp grows by 3 * 0.2 / 1.8 = 1/3 per cwnd of ACKs, and drags cwnd along.
        assert!(
            c.st.w_tcp > 12.0 && tp.snd_cwnd as f64 >= c.st.w_tcp - 2.0,
            "w_tcp {} cwnd {}",
            c.st.w_tcp,
            tp.snd_cwnd
        );
    }
}
