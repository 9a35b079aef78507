//! CUBIC-FIT (Wang, Wen, Han, Zhang, Li, Xiong, "CUBIC-FIT: A High Performance and TCP
//! CUBIC Friendly Congestion Control Algorithm", IEEE Communications Letters 2013): one
//! window that behaves like N plain CUBIC flows, with N steered by queueing delay.
//!
//! - Eq. 5: w = 0.4 (N t - I)^3 + w_max, I = cbrt(10 w_max / (19N + 1)); loss decrease
//!   b = 4 / (19N + 1), i.e. cwnd -> (1 - b) w_max (b = 0.2, plain CUBIC of the 2008
//!   paper, at N = 1).
//! - Eq. 6, every 500 ms: N <- max(1, N + 1 - (RTT_t - RTT_min) / (alpha RTT_t) N), with
//!   RTT_t the mean RTT sample of the period, RTT_min and RTT_max the smallest and largest
//!   RTT samples of the flow (Sec. III), alpha = min(1/10, (RTT_max - RTT_min) / (2
//!   RTT_max)).
//!
//! How it is built (our decisions, where the letter is silent): CUBIC-FIT runs inside
//! Linux CUBIC's framework (the paper's implementation was a kernel module), so this is
//! [`CubicCore`] (bit-for-bit Linux CUBIC: fixed point, cube root, cnt caps, HyStart,
//! fast convergence) with three changes:
//! 1. Time runs N times faster on the cubic: the kernel's t (in 2^-10 s) is multiplied by
//!    N before `t - K`. That is Eq. 5's `N t`; K is Linux's `cbrt((W_max - cwnd) / C)`,
//!    which equals Eq. 5's I whenever cwnd = (1 - b) W_max. K is fixed at the epoch
//!    start; a change of N mid-epoch changes the speed along the curve from then on.
//! 2. The loss decrease is exact: ssthresh = cwnd (19N - 3) / (19N + 1) in integers; the
//!    fast-convergence factor (1 - b/2) and the Reno estimate use b rounded to 1/1024.
//! 3. The Reno-friendly estimate is N Reno flows' (N times the AIMD increase of one
//!    flow with decrease b), the N-flow reading of CUBIC's TCP-friendly region.
//!
//! Arithmetic: N is fixed point with 10 fractional bits (1024 = one flow), capped at
//! [`N_MAX`] flows; the update is done in 64-bit integers (microseconds) in an order that
//! cannot overflow for RTTs below 2^32 us, so the eBPF port can be identical:
//! with N carried at 20 fractional bits inside the update, `dec = N q / avg * 10` when
//! alpha = 1/10, else `dec = (N q / (max - min)) * 2 max / avg`; `N = max(1024, N + 1024 -
//! dec)`; RTTs capped at 2^26 us there.

use crate::cubic::{CubicConfig, CubicCore, N_ONE};
use crate::cubic_config::{params_of, Variant};
use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{AckSample, CaEvent, CaState, CongestionControl, TcpState};

/// The period of the N update, 500 ms (Sec. II: "N is updated for every 500 ms").
pub const UPDATE_INTERVAL_US: u64 = 500_000;
/// Upper bound on N (virtual flows), a safety cap of ours: keeps every product in range.
pub const N_MAX: u32 = 1000;

/// The switches of the CUBIC framework that still apply (C and b are CUBIC-FIT's own):
/// the tunables [`crate::cubic_config::TUNABLES`] marks [`InFit::Settable`].
///
/// [`InFit::Settable`]: crate::cubic_config::InFit::Settable
pub const FIT_PARAMS: &[ParamSpec] = params_of!(Variant::CubicFit);

/// CUBIC-FIT.
#[derive(Clone, Debug)]
pub struct CubicFit {
    pub(crate) core: CubicCore,
    hz: u32,
    /// Smallest and largest RTT sample of the flow, microseconds (0: none yet).
    pub rtt_min_us: u32,
    pub rtt_max_us: u32,
    /// Mean RTT of the last completed period, microseconds.
    pub rtt_avg_us: u32,
    /// alpha of the last update (for reporting; the update itself is integer).
    pub alpha: f64,
    period_start_us: u64,
    period_sum_us: u64,
    period_samples: u32,
}

impl Default for CubicFit {
    fn default() -> Self {
        let mut core = CubicCore::new(CubicConfig::default());
        set_n(&mut core, N_ONE);
        CubicFit {
            core,
            hz: 1000,
            rtt_min_us: 0,
            rtt_max_us: 0,
            rtt_avg_us: 0,
            alpha: 0.0,
            period_start_us: 0,
            period_sum_us: 0,
            period_samples: 0,
        }
    }
}

/// Installs N (1/1024ths) in the core's per-flow state: time scale, and b = 4/(19N+1) as
/// beta = 1 - b.
fn set_n(core: &mut CubicCore, n: u32) {
    let nf = n as f64 / N_ONE as f64;
    core.set_virtual_flows(n, (19.0 * nf - 3.0) / (19.0 * nf + 1.0));
}

/// Eq. 6 in integers: the next N (1/1024ths) from the period's mean RTT and the flow's
/// min and max RTT samples (microseconds).
pub fn next_n(n: u32, avg: u64, min: u64, max: u64) -> u32 {
    // RTTs are capped at 2^26 us (67 s) so every product below fits in 64 bits.
    let (avg, min, max) = (avg.min(RTT_CAP_US), min.min(RTT_CAP_US), max.min(RTT_CAP_US));
    let q = avg.saturating_sub(min);
    // Intermediate values carry 10 more fractional bits (N << 10, i.e. 20 in all).
    let n20 = (n as u64) << 10;
    let dec = if q == 0 || avg == 0 || max <= min {
        0
    } else if 5 * (max - min) >= max {
        // alpha = 1/10: dec = 10 q / avg * N
        (n20 * q / avg * 10) >> 10
    } else {
        // alpha = (max - min) / (2 max): dec = 2 max q / ((max - min) avg) * N; q <= max - min
        ((n20 * q / (max - min)) * 2 * max / avg) >> 10
    };
    let next = (n as i64 + N_ONE as i64 - dec as i64).max(N_ONE as i64);
    next.min((N_MAX * N_ONE) as i64) as u32
}

/// Largest RTT the N update uses, 2^26 us (about 67 s).
pub const RTT_CAP_US: u64 = 1 << 26;

impl CubicFit {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "cubic-fit",
        summary:
            "CUBIC-FIT: N virtual CUBIC flows in one window, N from queueing delay every 500 ms",
        source: "Wang et al., IEEE Commun. Lett. 2013 (Eqs. 5, 6); Linux tcp_cubic.c framework",
        params: FIT_PARAMS,
    };

    /// N, the number of virtual flows.
    pub fn n(&self) -> f64 {
        self.core.n() as f64 / N_ONE as f64
    }

    /// b = 4 / (19N + 1), the multiplicative decrease.
    pub fn b(&self) -> f64 {
        4.0 * N_ONE as f64 / (19.0 * self.core.n() as f64 + N_ONE as f64)
    }

    fn sample(&mut self, now_us: u64, rtt: u32) {
        self.rtt_min_us = if self.rtt_min_us == 0 { rtt } else { self.rtt_min_us.min(rtt) };
        self.rtt_max_us = self.rtt_max_us.max(rtt);
        self.period_sum_us += rtt as u64;
        self.period_samples += 1;
        if now_us.saturating_sub(self.period_start_us) >= UPDATE_INTERVAL_US {
            let avg = self.period_sum_us / self.period_samples as u64;
            let (min, max) = (self.rtt_min_us as u64, self.rtt_max_us as u64);
            self.rtt_avg_us = avg as u32;
            self.alpha =
                if max == 0 { 0.0 } else { ((max - min) as f64 / (2.0 * max as f64)).min(0.1) };
            let n = next_n(self.core.n(), avg, min, max);
            if n != self.core.n() {
                set_n(&mut self.core, n);
            }
            self.period_start_us = now_us;
            self.period_sum_us = 0;
            self.period_samples = 0;
        }
    }
}

impl CongestionControl for CubicFit {
    fn init(&mut self, tp: &mut TcpState) {
        self.hz = tp.hz;
        self.period_start_us = tp.now_us;
        self.core.init(tp)
    }
    /// W_max as CUBIC (fast convergence with 1 - b/2), then cwnd (1 - b) exactly.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.core.on_loss(tp.snd_cwnd);
        let n19 = 19 * self.core.n() as u64;
        let s = tp.snd_cwnd as u64 * (n19 - 3 * N_ONE as u64) / (n19 + N_ONE as u64);
        (s as u32).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        self.core.cong_avoid(tp, acked)
    }
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        self.core.set_state(tp, new_state)
    }
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        self.core.cwnd_event(tp, event)
    }
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt_us {
            self.sample(tp.now_us, rtt.max(1));
        }
        self.core.pkts_acked(tp, sample)
    }
    fn params(&self) -> &'static [ParamSpec] {
        FIT_PARAMS
    }
    fn param(&self, name: &str) -> Option<f64> {
        FIT_PARAMS.iter().find(|p| p.name == name).and_then(|_| self.core.param(name))
    }
    fn apply_param(&mut self, name: &str, value: f64) {
        self.core.apply_param(name, value);
    }
    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        self.core.inspect(self.hz, report);
        report("n", self.n());
        report("alpha", self.alpha);
        report("rtt_min_us", self.rtt_min_us as f64);
        report("rtt_max_us", self.rtt_max_us as f64);
        report("rtt_avg_us", self.rtt_avg_us as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::tests::ca_state;
    use crate::cubic::Cubic;

    /// Feeds RTT samples every 10 ms for `ms` milliseconds.
    fn feed(f: &mut CubicFit, tp: &mut TcpState, ms: u64, rtt: impl Fn(u64) -> u32) {
        for i in 0..ms / 10 {
            tp.now_us += 10_000;
            f.pkts_acked(tp, &AckSample { pkts_acked: 1, rtt_us: Some(rtt(i)), in_flight: 10 });
        }
    }

    fn fresh() -> (CubicFit, TcpState) {
        let mut f = CubicFit::default();
        let mut tp = ca_state(100);
        f.init(&mut tp);
        (f, tp)
    }

    #[test]
    fn n_grows_by_one_per_period_without_queueing() {
        let (mut f, mut tp) = fresh();
        feed(&mut f, &mut tp, 5000, |_| 100_000);
        assert_eq!(f.n(), 11.0, "ten 500 ms periods, +1 each");
        assert_eq!(f.alpha, 0.0);
    }

    #[test]
    fn n_shrinks_with_large_queueing_and_never_below_one() {
        let (mut f, mut tp) = fresh();
        feed(&mut f, &mut tp, 5000, |_| 100_000);
        assert_eq!(f.n(), 11.0);
        // Queueing delay of 100 ms on a 100 ms path: alpha = min(0.1, 100/400) = 0.1,
        // N <- max(1, N + 1 - 10 * (200 - 100) / 200 * N) = 1.
        feed(&mut f, &mut tp, 500, |_| 200_000);
        assert_eq!(f.n(), 1.0);
        assert!((f.alpha - 0.1).abs() < 1e-9);
        feed(&mut f, &mut tp, 2000, |_| 200_000);
        assert_eq!(f.n(), 1.0, "N never below 1");
    }

    #[test]
    fn n_settles_where_queueing_balances_growth() {
        // Small queueing delay q = 1 ms on 100 ms with alpha = 0.1 (max seen 150 ms):
        // the decrease is 10 q / RTT N = 0.099 N per period, so N -> 1/0.099 ~ 10.
        let (mut f, mut tp) = fresh();
        feed(&mut f, &mut tp, 10, |_| 150_000);
        feed(&mut f, &mut tp, 20, |_| 100_000);
        feed(&mut f, &mut tp, 60_000, |_| 101_000);
        assert!((9.0..=11.0).contains(&f.n()), "N = {}", f.n());
    }

    #[test]
    fn next_n_matches_eq6_in_floating_point() {
        for &(n, avg, min, max) in &[
            (1.0, 120.0, 100.0, 300.0),
            (5.0, 101.0, 100.0, 104.0),
            (20.0, 100.5, 100.0, 101.0),
            (3.0, 110.0, 100.0, 115.0),
        ] {
            let alpha = f64::min(0.1, (max - min) / (2.0 * max));
            let exact = f64::max(1.0, n + 1.0 - (avg - min) / (alpha * avg) * n);
            let got = next_n(
                (n * 1024.0) as u32,
                (avg * 1000.0) as u64,
                (min * 1000.0) as u64,
                (max * 1000.0) as u64,
            ) as f64
                / 1024.0;
            assert!(
                (got - exact).abs() < 0.01 + 0.001 * exact,
                "N {n} avg {avg}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn decrease_is_4_over_19n_plus_1() {
        for n in [1u32, 2, 3, 10, 100] {
            let mut f = CubicFit::default();
            set_n(&mut f.core, n * N_ONE);
            assert!((f.b() - 4.0 / (19.0 * n as f64 + 1.0)).abs() < 1e-12);
            let tp = ca_state(10_000);
            let s = f.ssthresh(&tp);
            let expect = (10_000.0 * (1.0 - 4.0 / (19.0 * n as f64 + 1.0))).floor() as u32;
            assert_eq!(s, expect, "N = {n}");
        }
    }

    /// Eq. 5: with N virtual flows the curve is plain CUBIC's at N t.
    #[test]
    fn the_curve_runs_n_times_faster() {
        let mut fit = CubicFit::default();
        set_n(&mut fit.core, 3 * N_ONE);
        fit.apply_param("tcp_friendliness", 0.0);
        let mut plain = Cubic::default();
        plain.apply_param("tcp_friendliness", 0.0);
        for c in [&mut fit.core, &mut plain.core] {
            c.state_mut().last_max_cwnd = 1000;
        }
        let mut tp = ca_state(800);
        tp.now_us = 10_000_000;
        fit.cong_avoid(&mut tp.clone(), 1);
        plain.cong_avoid(&mut tp.clone(), 1);
        assert_eq!(fit.core.state().bic_k, plain.core.state().bic_k);
        // 1 s into the epoch for CUBIC-FIT is 3 s for plain CUBIC.
        let mut a = tp.clone();
        a.now_us += 1_000_000;
        fit.cong_avoid(&mut a, 1);
        let mut b = tp.clone();
        b.now_us += 3_000_000;
        plain.cong_avoid(&mut b, 1);
        let (cf, cp) = (fit.core.state().cnt as i64, plain.core.state().cnt as i64);
        assert!((cf - cp).abs() <= 1 + cp / 50, "cnt {cf} vs {cp}");
    }

    /// N and the beta it gives are per-flow state: the configuration stays as set.
    #[test]
    fn n_leaves_the_configuration_alone() {
        let (mut f, mut tp) = fresh();
        feed(&mut f, &mut tp, 5000, |_| 100_000);
        assert_eq!(f.n(), 11.0);
        assert_eq!(f.core.config(), &CubicConfig::default());
        let beta_11 = (1024.0 * (19.0 * 11.0 - 3.0) / (19.0 * 11.0 + 1.0_f64)).round() as u32;
        assert_eq!(f.core.derived().beta, beta_11);
        f.apply_param("hystart", 0.0);
        assert!(!f.core.config().hystart);
        assert_eq!((f.n(), f.core.derived().beta), (11.0, beta_11), "a setting keeps N's beta");
    }

    #[test]
    fn inspect_reports_n_and_rtt_statistics() {
        let (mut f, mut tp) = fresh();
        feed(&mut f, &mut tp, 600, |i| 100_000 + (i as u32 % 3) * 1000);
        let mut seen = vec![];
        f.inspect(&mut |k, v| seen.push((k, v)));
        let get = |k: &str| seen.iter().find(|(n, _)| *n == k).map(|x| x.1);
        assert_eq!(get("rtt_min_us"), Some(100_000.0));
        assert_eq!(get("rtt_max_us"), Some(102_000.0));
        assert!(
            get("n").is_some()
                && get("alpha").is_some()
                && get("rtt_avg_us").unwrap() > 100_000.0
                && get("w_max").is_some()
        );
    }
}
