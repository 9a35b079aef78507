//! CUBIC by the letter of RFC 9438 ("CUBIC for Fast and Long-Distance Networks", August
//! 2023), in floating point, so that it can be read beside the RFC; differences from
//! Linux's integer `cubic` are what users come here to see.
//!
//! - Sec. 4.2: W_cubic(t) = C (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C),
//!   C = 0.4, t = seconds since the congestion-avoidance epoch began.
//! - Sec. 4.3: Reno-friendly W_est starts at cwnd_epoch and grows by alpha_cubic *
//!   acked / cwnd, alpha_cubic = 3 (1 - beta) / (1 + beta) until W_est >= cwnd_prior,
//!   then 1. When W_cubic(t) < W_est, cwnd follows W_est.
//! - Sec. 4.4, 4.5: otherwise the target is W_cubic(t + RTT) (RTT: smoothed RTT),
//!   clamped to [cwnd, 1.5 cwnd], and cwnd grows by (target - cwnd) / cwnd per ACKed
//!   segment.
//! - Sec. 4.6: at a congestion event ssthresh = max(flight_size * beta, 2), beta = 0.7;
//!   cwnd_prior = cwnd.
//! - Sec. 4.7: fast convergence: W_max = cwnd (1 + beta) / 2 if cwnd < the previous W_max,
//!   else cwnd.
//! - Sec. 4.8: after a timeout the epoch restarts (W_max kept); Sec. 4.9: undo restores
//!   the saved state.
//! - Sec. 4.10: slow start is standard slow start (HyStart++, RFC 9406, is optional and
//!   not modelled here).
//!
//! cwnd is kept in fractional segments internally; the sender sees its integer part.

use crate::cubic_knobs::CubicKnobs;
use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CaState, CongestionControl, TcpState};

/// Parameters (Sec. 5 recommends C = 0.4 and beta = 0.7).
pub const RFC9438_PARAMS: &[ParamSpec] = &[
    ParamSpec::float_open_min(
        "beta",
        0.7,
        0.0,
        1.0,
        "",
        "beta_cubic: cwnd -> beta * flight size at a congestion event",
    ),
    ParamSpec::float_open_min("c", 0.4, 0.0, 10.0, "segments/s^3", "C, the cubic's scale"),
    ParamSpec::switch("fast_convergence", true, "Sec. 4.7 fast convergence"),
    ParamSpec::switch("tcp_friendliness", true, "Sec. 4.3 Reno-friendly region"),
];

#[derive(Clone, Debug, Default, PartialEq)]
struct Saved {
    w_max: f64,
    k: f64,
    cwnd_prior: f64,
    w_est: f64,
}

/// RFC 9438 CUBIC.
#[derive(Clone, Debug)]
pub struct CubicRfc9438 {
    /// beta, C and the two switches.
    pub knobs: CubicKnobs,
    /// W_max, segments.
    pub w_max: f64,
    /// K, seconds.
    pub k: f64,
    /// cwnd before the last reduction, segments.
    pub cwnd_prior: f64,
    /// Reno-friendly estimate, segments.
    pub w_est: f64,
    /// Start of the current epoch, microseconds (None: not in an epoch).
    pub epoch_start_us: Option<u64>,
    /// cwnd with its fractional part, segments.
    cwnd: f64,
    saved: Saved,
}

impl Default for CubicRfc9438 {
    fn default() -> Self {
        CubicRfc9438 {
            knobs: CubicKnobs::with_beta(0.7),
            w_max: 0.0,
            k: 0.0,
            cwnd_prior: 0.0,
            w_est: 0.0,
            epoch_start_us: None,
            cwnd: 0.0,
            saved: Saved::default(),
        }
    }
}

impl CubicRfc9438 {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "cubic-rfc9438",
        summary: "CUBIC as RFC 9438 writes it (floating point): W_est with alpha_cubic, target clamp 1.5 cwnd",
        source: "RFC 9438 Sections 4.1-4.10",
        params: RFC9438_PARAMS,
    };

    /// W_cubic(t), Sec. 4.2 Eq. 1.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.knobs.c * (t - self.k).powi(3) + self.w_max
    }

    fn alpha_cubic(&self) -> f64 {
        if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - self.knobs.beta) / (1.0 + self.knobs.beta)
        }
    }
}

impl CongestionControl for CubicRfc9438 {
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.saved =
            Saved { w_max: self.w_max, k: self.k, cwnd_prior: self.cwnd_prior, w_est: self.w_est };
        let cwnd = tp.snd_cwnd as f64;
        // Sec. 4.7 fast convergence.
        self.w_max = if self.knobs.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.knobs.beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.epoch_start_us = None;
        // Sec. 4.6: ssthresh = flight_size * beta_cubic, at least 2 segments.
        let flight = if tp.packets_in_flight > 0 { tp.packets_in_flight } else { tp.snd_cwnd };
        ((flight as f64 * self.knobs.beta) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        let Some(acked) = tcp::slow_start_first(tp, acked) else {
            return;
        };
        if self.cwnd.floor() as u32 != tp.snd_cwnd {
            self.cwnd = tp.snd_cwnd as f64; // the sender changed cwnd (recovery, undo)
        }
        let now = tp.now_us;
        if self.epoch_start_us.is_none() {
            // Sec. 4.2: a new epoch; K from cwnd_epoch (the plateau is never below it).
            // Sec. 4.3: W_est starts at cwnd_epoch.
            self.epoch_start_us = Some(now);
            let cwnd_epoch = self.cwnd;
            if self.w_max < cwnd_epoch {
                self.w_max = cwnd_epoch;
            }
            self.k = ((self.w_max - cwnd_epoch) / self.knobs.c).cbrt();
            self.w_est = cwnd_epoch;
        }
        let start = self.epoch_start_us.unwrap_or(now);
        let t = (now - start) as f64 / 1e6;
        let rtt = if tp.srtt_us > 0 { tp.srtt_us() as f64 / 1e6 } else { 0.0 };
        let segs = acked as f64;
        // Sec. 4.3.
        self.w_est += self.alpha_cubic() * segs / self.cwnd;
        if self.knobs.tcp_friendliness && self.w_cubic(t) < self.w_est {
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            // Sec. 4.4/4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd * segs;
        }
        tp.snd_cwnd = (self.cwnd.floor() as u32).max(1).min(tp.snd_cwnd_clamp);
    }

    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            // Sec. 4.8: after an RTO, begin a new epoch once in congestion avoidance.
            self.epoch_start_us = None;
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        // Sec. 4.9: restore the state saved before the spurious reduction.
        self.w_max = self.saved.w_max;
        self.k = self.saved.k;
        self.cwnd_prior = self.saved.cwnd_prior;
        self.w_est = self.saved.w_est;
        self.epoch_start_us = None;
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    fn params(&self) -> &'static [ParamSpec] {
        RFC9438_PARAMS
    }
    fn param(&self, name: &str) -> Option<f64> {
        self.knobs.get(name)
    }
    fn apply_param(&mut self, name: &str, value: f64) {
        let c = self.knobs.c;
        self.knobs.set(name, value);
        // A C changed below the epoch's plateau ends the epoch: the next starts from
        // this cwnd with K computed with the new C, as `cubic` does (`CubicCore::update`
        // says why). At or past the plateau the new C applies as it is.
        if self.knobs.c != c && self.cwnd < self.w_max {
            self.epoch_start_us = None;
        }
    }
    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("w_max", self.w_max);
        report("k", self.k);
        report("w_est", self.w_est);
        report("cwnd_prior", self.cwnd_prior);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::tests::ca_state;

    #[test]
    fn ssthresh_uses_flight_size_and_fast_convergence() {
        let mut c = CubicRfc9438::default();
        let mut tp = ca_state(100);
        tp.packets_in_flight = 80;
        assert_eq!(c.ssthresh(&tp), 56);
        assert_eq!((c.w_max, c.cwnd_prior), (100.0, 100.0));
        tp.snd_cwnd = 90;
        c.ssthresh(&tp);
        assert!((c.w_max - 90.0 * 0.85).abs() < 1e-9);
    }

    #[test]
    fn k_and_w_of_t_closed_form() {
        let mut c = CubicRfc9438 {
            knobs: CubicKnobs { tcp_friendliness: false, ..CubicKnobs::with_beta(0.7) },
            ..Default::default()
        };
        let mut tp = ca_state(1000);
        tp.packets_in_flight = 1000;
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        tp.now_us = 1_000_000;
        c.cong_avoid(&mut tp, 1);
        let k = (300.0f64 / 0.4).cbrt();
        assert!((c.k - k).abs() < 0.01, "K {} vs {k}", c.k);
        assert!((c.w_cubic(k) - 1000.0).abs() < 1e-9);
        assert!((c.w_cubic(0.0) - 700.0).abs() < 0.5);
    }

    #[test]
    fn alpha_cubic_switches_to_one_at_cwnd_prior() {
        let mut c = CubicRfc9438 { cwnd_prior: 100.0, ..Default::default() };
        c.w_est = 99.0;
        assert!((c.alpha_cubic() - 0.9 / 1.7).abs() < 1e-12);
        c.w_est = 100.0;
        assert_eq!(c.alpha_cubic(), 1.0);
    }

    /// Target clamp: at most +50% per RTT even far above the plateau.
    #[test]
    fn growth_is_at_most_one_and_a_half_per_rtt() {
        let mut c = CubicRfc9438 {
            knobs: CubicKnobs { tcp_friendliness: false, ..CubicKnobs::with_beta(0.7) },
            ..Default::default()
        };
        let mut tp = ca_state(100);
        c.w_max = 10.0;
        tp.now_us = 100_000_000;
        c.cong_avoid(&mut tp, 1);
        tp.now_us += 30_000_000; // far into the convex region
        let before = tp.snd_cwnd;
        for _ in 0..before {
            c.cong_avoid(&mut tp, 1);
        }
        assert!(
            tp.snd_cwnd as f64 <= 1.5 * before as f64 + 1.0 && tp.snd_cwnd > before + 30,
            "{before} -> {}",
            tp.snd_cwnd
        );
    }
}
