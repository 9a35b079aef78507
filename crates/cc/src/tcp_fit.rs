//! TCP-FIT (J. Wang, J. Wen, J. Zhang, Y. Han, "TCP-FIT: An Improved TCP Congestion
//! Control Algorithm and its Performance", IEEE INFOCOM 2011).
//!
//! One connection behaves like N virtual Reno flows sharing one window: in congestion
//! avoidance each ACK adds N/cwnd (N packets per RTT), and a loss, which hits only one of
//! the N virtual flows, keeps `1 - 2/(3N + 1)` of the window (Reno's 1/2 at N = 1). N is
//! adapted from the queueing delay at the end of each update period:
//!
//! `N <- max(1, N + 1 - (RTT_avg - RTT_min) / (alpha RTT_avg) N)`
//!
//! with RTT_avg the mean RTT of the period and RTT_min the smallest ever: N grows by one
//! per period while nothing queues and settles where the flow keeps about alpha of its
//! RTT as queueing delay. This is the rule that CUBIC-FIT (seed `000_…`, Eq. 6) takes from
//! TCP-FIT, and the seed's period of 500 ms is used here too.
//!
//! There is no Linux module. Choices made here, each a parameter: alpha = 0.1 (the paper
//! leaves alpha in (0, 1) to the implementer; CUBIC-FIT caps its own alpha at 1/10), an
//! update period of 500 ms, and N capped at `n_max` = 1000 so that a flow with no queue
//! (an application-limited one) cannot grow N without bound.

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CongestionControl, TcpState};

/// Tunables.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Target share of the RTT spent queueing (0.1).
    pub alpha: f64,
    /// Time between updates of N, milliseconds (500).
    pub update_interval_ms: u32,
    /// Largest N (1000).
    pub n_max: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config { alpha: 0.1, update_interval_ms: 500, n_max: 1000.0 }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::float_open_min(
        "alpha",
        0.1,
        0.0,
        1.0,
        "",
        "N settles where queueing delay is about alpha of the RTT",
    ),
    ParamSpec::int("update_interval_ms", 500, 1, 60_000, "ms", "period between updates of N"),
    ParamSpec::float("n_max", 1000.0, 1.0, 1e6, "flows", "largest number of virtual Reno flows"),
];

/// Per-flow state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Number of virtual Reno flows (real-valued, >= 1).
    pub n: f64,
    /// Increase credit in packets*N: one packet is added per cwnd of credit.
    pub credit: f64,
    /// Smallest RTT ever, µs (`u32::MAX` before any sample).
    pub rtt_min_us: u32,
    /// Sum and count of RTT samples in the current period.
    pub sum_rtt_us: u64,
    pub cnt_rtt: u32,
    /// Start of the current period, µs; `None` until the first ACK.
    pub period_start_us: Option<u64>,
    /// Mean RTT of the last complete period, µs (for inspection).
    pub last_avg_rtt_us: f64,
}

impl Default for State {
    fn default() -> Self {
        State {
            n: 1.0,
            credit: 0.0,
            rtt_min_us: u32::MAX,
            sum_rtt_us: 0,
            cnt_rtt: 0,
            period_start_us: None,
            last_avg_rtt_us: 0.0,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct TcpFit {
    cfg: Config,
    st: State,
}

impl TcpFit {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "tcp-fit",
        summary: "TCP-FIT: N virtual Reno flows in one window, N adapted from queueing delay",
        source: "Wang, Wen, Zhang, Han, IEEE INFOCOM 2011",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> TcpFit {
        TcpFit { cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    /// The update rule (CUBIC-FIT Eq. 6, from TCP-FIT), given the period's mean RTT.
    fn update_n(&mut self, avg_rtt_us: f64) {
        let min = self.st.rtt_min_us as f64;
        let queueing = (avg_rtt_us - min).max(0.0);
        let n = self.st.n;
        let next = n + 1.0 - queueing / (self.cfg.alpha * avg_rtt_us) * n;
        self.st.n = next.clamp(1.0, self.cfg.n_max);
    }

    /// Closes the period if it is over.
    fn maybe_update(&mut self, now_us: u64) {
        let Some(start) = self.st.period_start_us else {
            self.st.period_start_us = Some(now_us);
            return;
        };
        if now_us < start + self.cfg.update_interval_ms as u64 * 1000 {
            return;
        }
        if self.st.cnt_rtt > 0 && self.st.rtt_min_us != u32::MAX {
            let avg = self.st.sum_rtt_us as f64 / self.st.cnt_rtt as f64;
            self.st.last_avg_rtt_us = avg;
            self.update_n(avg);
        }
        self.st.sum_rtt_us = 0;
        self.st.cnt_rtt = 0;
        self.st.period_start_us = Some(now_us);
    }
}

impl CongestionControl for TcpFit {
    fn init(&mut self, _tp: &mut TcpState) {
        self.st = State::default();
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt_us {
            let rtt = rtt.max(1);
            self.st.rtt_min_us = self.st.rtt_min_us.min(rtt);
            self.st.sum_rtt_us += rtt as u64;
            self.st.cnt_rtt += 1;
        }
        self.maybe_update(tp.now_us);
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        let Some(acked) = tcp::slow_start_first(tp, acked) else {
            return;
        };
        // cwnd += N / cwnd per ACKed packet.
        self.st.credit += self.st.n * acked as f64;
        while self.st.credit >= tp.snd_cwnd as f64 && tp.snd_cwnd < tp.snd_cwnd_clamp {
            self.st.credit -= tp.snd_cwnd as f64;
            tp.snd_cwnd += 1;
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.st.credit = 0.0;
        let keep = 1.0 - 2.0 / (3.0 * self.st.n + 1.0);
        ((tp.snd_cwnd as f64 * keep) as u32).max(2)
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        Some(match name {
            "alpha" => self.cfg.alpha,
            "update_interval_ms" => self.cfg.update_interval_ms as f64,
            "n_max" => self.cfg.n_max,
            _ => return None,
        })
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        match name {
            "alpha" => self.cfg.alpha = value,
            "update_interval_ms" => self.cfg.update_interval_ms = value as u32,
            "n_max" => {
                self.cfg.n_max = value;
                self.st.n = self.st.n.min(value);
            }
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("n", self.st.n);
        report("alpha", self.cfg.alpha);
        if self.st.rtt_min_us != u32::MAX {
            report("rtt_min_us", self.st.rtt_min_us as f64);
            report("rtt_avg_us", self.st.last_avg_rtt_us);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one 500 ms period of ACKs every 10 ms with RTT `rtt_ms` (after one base sample
    /// of 100 ms at the start), returning N after the period closes.
    fn period(f: &mut TcpFit, t: &mut TcpState, rtt_ms: u32) -> f64 {
        for _ in 0..50 {
            t.now_us += 10_000;
            f.pkts_acked(
                t,
                &AckSample { pkts_acked: 1, rtt_us: Some(rtt_ms * 1000), in_flight: 10 },
            );
        }
        f.st.n
    }

    fn flow() -> (TcpFit, TcpState) {
        let mut t = TcpState::new(1448, 10);
        let mut f = TcpFit::default();
        f.init(&mut t);
        f.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_us: Some(100_000), in_flight: 10 });
        (f, t)
    }

    /// The N update: with no queueing N grows by one per period (1, 2, 3); with RTT 110 ms
    /// over a 100 ms minimum, q/(alpha RTT) = 10/11, so N -> N + 1 - 10N/11 (from 3:
    /// 3 + 1 - 30/11 = 1.27); with RTT 200 ms (q/(alpha RTT) = 5) it falls to the floor 1.
    #[test]
    fn n_follows_queueing_delay() {
        let (mut f, mut t) = flow();
        assert_eq!(period(&mut f, &mut t, 100), 2.0);
        assert_eq!(period(&mut f, &mut t, 100), 3.0);
        let n = period(&mut f, &mut t, 110);
        assert!((n - (4.0 - 30.0 / 11.0)).abs() < 1e-9, "N = {n}");
        assert_eq!(period(&mut f, &mut t, 200), 1.0);
        // The fixed point at RTT 110 ms: N* = alpha RTT / q = 1.1.
        for _ in 0..50 {
            period(&mut f, &mut t, 110);
        }
        assert!((f.st.n - 1.1).abs() < 1e-6, "N* = {}", f.st.n);
    }

    /// The decrease keeps 1 - 2/(3N + 1): Reno's half at N = 1, 0.8 at N = 3, 0.9 at N = 6.33.
    #[test]
    fn decrease_depends_on_n() {
        let (mut f, mut t) = flow();
        t.snd_cwnd = 100;
        assert_eq!(f.ssthresh(&t), 50);
        f.st.n = 3.0;
        assert_eq!(f.ssthresh(&t), 80);
        f.st.n = 19.0 / 3.0;
        assert_eq!(f.ssthresh(&t), 90);
    }

    /// The increase: N packets per window of ACKs (N = 4 at cwnd 100: 100 ACKs add 4,
    /// within one of it as cwnd grows on the way).
    #[test]
    fn increase_is_n_per_rtt() {
        let (mut f, mut t) = flow();
        t.snd_cwnd = 100;
        t.snd_ssthresh = 50;
        f.st.n = 4.0;
        for _ in 0..100 {
            f.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 103);
        f.st.n = 1.0;
        f.st.credit = 0.0;
        t.snd_cwnd = 100;
        for _ in 0..100 {
            f.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 101, "N = 1 is Reno");
    }

    /// N never exceeds n_max, and lowering n_max on a running flow applies at once.
    #[test]
    fn n_is_capped() {
        let mut a = crate::Algorithm::new("tcp-fit").unwrap();
        a.set_param("n_max", 2.0).unwrap();
        let (mut f, mut t) = flow();
        f.apply_param("n_max", 2.0);
        for _ in 0..5 {
            period(&mut f, &mut t, 100);
        }
        assert_eq!(f.st.n, 2.0);
        assert!(a.set_param("alpha", 0.0).is_err());
    }
}
