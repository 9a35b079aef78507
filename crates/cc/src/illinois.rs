//! TCP-Illinois (S. Liu, T. Başar, R. Srikant, "TCP-Illinois: A Loss- and Delay-Based
//! Congestion Control Algorithm for High-Speed Networks", Performance Evaluation 65(6-7),
//! 2008), as Linux runs it in `net/ipv4/tcp_illinois.c`.
//!
//! Loss decides the direction, delay decides the pace. Once per RTT the average queueing
//! delay `da` (mean RTT of the round minus the smallest RTT) is compared with the largest
//! seen, `dm`: the additive increase alpha falls from 10 packets per RTT (no queueing,
//! `da <= dm/100`) along `k1/(k2 + da)` to 0.3 at `da = dm`, and the decrease beta rises
//! linearly from 1/8 (`da <= dm/10`) to 1/2 (`da >= 8 dm/10`). Below `win_thresh` = 15
//! packets it is Reno (alpha 1, beta 1/2). After a period of congestion, alpha returns to
//! its maximum only after `theta` = 5 consecutive low-delay RTTs.
//!
//! Integer arithmetic follows Linux: alpha << 7, beta << 6, RTTs in microseconds. Rounds
//! are counted with [`RoundTracker`](crate::vegas::RoundTracker) (Linux compares the ACK
//! with `snd_nxt`, which `TcpState` does not carry).

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::vegas::RoundTracker;
use crate::{tcp, AckSample, CaState, CongestionControl, TcpState};

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// 0.3 (38/128).
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// 10.0.
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// 1.0.
pub const ALPHA_BASE: u32 = ALPHA_SCALE;
/// RTT samples are capped here so that alpha's arithmetic cannot overflow (3.3 s).
const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// 0.125.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
/// 0.5.
pub const BETA_MAX: u32 = BETA_SCALE / 2;
pub const BETA_BASE: u32 = BETA_MAX;

/// Tunables, with Linux's module-parameter names and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Below this window Illinois is Reno, in packets (Linux 15).
    pub win_thresh: u32,
    /// Low-delay RTTs needed before alpha returns to its maximum (Linux 5).
    pub theta: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { win_thresh: 15, theta: 5 }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "win_thresh",
        15,
        0,
        0x7fff_ffff,
        "packets",
        "window below which Illinois behaves as Reno",
    ),
    ParamSpec::int(
        "theta",
        5,
        1,
        255,
        "RTTs",
        "low-delay RTTs before alpha may return to its maximum",
    ),
];

/// Per-flow state (Linux `struct illinois`). RTTs in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Sum and count of RTT samples in this round.
    pub sum_rtt: u64,
    pub cnt_rtt: u32,
    /// Smallest and largest RTT ever.
    pub base_rtt_us: u32,
    pub max_rtt_us: u32,
    /// Additive increase per RTT, << 7.
    pub alpha: u32,
    /// Fraction of cwnd removed on a loss, << 6.
    pub beta: u32,
    /// Packets the current ACK covers.
    pub acked: u32,
    /// The average delay has been above the low threshold since alpha was last maximal.
    pub rtt_above: bool,
    /// Consecutive low-delay rounds.
    pub rtt_low: u32,
    pub round: RoundTracker,
}

impl Default for State {
    fn default() -> Self {
        State {
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt_us: 0x7fff_ffff,
            max_rtt_us: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            round: RoundTracker::default(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Illinois {
    cfg: Config,
    st: State,
}

impl Illinois {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "illinois",
        summary:
            "Illinois: AIMD whose alpha (10 to 0.3) and beta (1/8 to 1/2) follow queueing delay",
        source: "Liu, Başar, Srikant, Performance Evaluation 2008; Linux net/ipv4/tcp_illinois.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Illinois {
        Illinois { cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    fn rtt_reset(&mut self, tp: &TcpState) {
        self.st.round.start(tp);
        self.st.cnt_rtt = 0;
        self.st.sum_rtt = 0;
    }

    /// alpha from the average delay `da` and the largest `dm` (both queueing delay, µs).
    fn alpha(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.st.rtt_above {
                return ALPHA_MAX;
            }
            // One good RTT is not enough to jump back to the maximum.
            self.st.rtt_low += 1;
            if self.st.rtt_low < self.cfg.theta {
                return self.st.alpha;
            }
            self.st.rtt_low = 0;
            self.st.rtt_above = false;
            return ALPHA_MAX;
        }
        self.st.rtt_above = true;
        // alpha = k1 / (k2 + da), with the curve through (d1, max) and (dm, min).
        let (dm, da) = ((dm - d1) as u64, (da - d1) as u64);
        ((dm * ALPHA_MAX as u64) / (dm + (da * (ALPHA_MAX - ALPHA_MIN) as u64) / ALPHA_MIN as u64))
            as u32
    }

    fn update_params(&mut self, tp: &TcpState) {
        if tp.snd_cwnd < self.cfg.win_thresh {
            self.st.alpha = ALPHA_BASE;
            self.st.beta = BETA_BASE;
        } else if self.st.cnt_rtt > 0 {
            let dm = self.st.max_rtt_us - self.st.base_rtt_us;
            let da = (self.st.sum_rtt / self.st.cnt_rtt as u64) as u32 - self.st.base_rtt_us;
            self.st.alpha = self.alpha(da, dm);
            self.st.beta = beta(da, dm);
        }
        self.rtt_reset(tp);
    }
}

/// beta: 1/8 while da <= dm/10, 1/2 from 8 dm/10, linear in between.
fn beta(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = ((8 * dm as u64) / 10) as u32;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    ((BETA_MIN as u64 * d3 as u64 + (BETA_MAX - BETA_MIN) as u64 * da as u64
        - BETA_MAX as u64 * d2 as u64)
        / (d3 - d2) as u64) as u32
}

impl CongestionControl for Illinois {
    fn init(&mut self, tp: &mut TcpState) {
        self.st = State::default();
        self.rtt_reset(tp);
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.st.acked = sample.pkts_acked;
        let Some(rtt) = sample.rtt_us else { return };
        let rtt = rtt.min(RTT_MAX);
        self.st.base_rtt_us = self.st.base_rtt_us.min(rtt);
        self.st.max_rtt_us = self.st.max_rtt_us.max(rtt);
        self.st.cnt_rtt += 1;
        self.st.sum_rtt += rtt as u64;
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.st.alpha = ALPHA_BASE;
            self.st.beta = BETA_BASE;
            self.st.rtt_low = 0;
            self.st.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if self.st.round.is_over(tp) {
            self.update_params(tp);
        }
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if tcp::in_slow_start(tp) {
            tcp::slow_start(tp, acked);
            return;
        }
        // cwnd += alpha / cwnd per ACKed packet.
        tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(self.st.acked);
        self.st.acked = 1;
        let delta = ((tp.snd_cwnd_cnt as u64 * self.st.alpha as u64) >> ALPHA_SHIFT) as u32;
        if delta >= tp.snd_cwnd {
            tp.snd_cwnd = (tp.snd_cwnd + delta / tp.snd_cwnd).min(tp.snd_cwnd_clamp);
            tp.snd_cwnd_cnt = 0;
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cut = ((tp.snd_cwnd as u64 * self.st.beta as u64) >> BETA_SHIFT) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        match name {
            "win_thresh" => Some(self.cfg.win_thresh as f64),
            "theta" => Some(self.cfg.theta as f64),
            _ => None,
        }
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        match name {
            "win_thresh" => self.cfg.win_thresh = value as u32,
            "theta" => self.cfg.theta = value as u32,
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("alpha", self.st.alpha as f64 / ALPHA_SCALE as f64);
        report("beta", self.st.beta as f64 / BETA_SCALE as f64);
        if self.st.base_rtt_us != 0x7fff_ffff {
            report("base_rtt_us", self.st.base_rtt_us as f64);
            report("max_rtt_us", self.st.max_rtt_us as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        t.packets_in_flight = cwnd;
        t
    }

    fn sample(i: &mut Illinois, t: &mut TcpState, rtt_us: u32) {
        i.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_us: Some(rtt_us), in_flight: t.snd_cwnd });
    }

    /// A flow that saw base 100 ms and max 200 ms (dm = 100 ms), then one round of RTTs
    /// `rtt_us`; the next ACK ends the round and updates alpha and beta.
    fn after_round(rtt_us: u32) -> (Illinois, TcpState) {
        let mut t = tp(100);
        let mut i = Illinois::default();
        i.init(&mut t);
        sample(&mut i, &mut t, 100_000);
        sample(&mut i, &mut t, 200_000);
        i.rtt_reset(&t);
        for _ in 0..t.packets_in_flight {
            t.delivered += 1;
            sample(&mut i, &mut t, rtt_us);
            i.cong_avoid(&mut t, 1);
        }
        t.delivered += 1;
        i.st.acked = 0;
        i.cong_avoid(&mut t, 1);
        (i, t)
    }

    /// alpha against average queueing delay with dm = 100 ms: 10 at no delay, 0.3 at the
    /// maximum, and k1/(k2 + da) between: at da = 10 ms,
    /// 99000*1280 / (99000 + 9000*1242/38) = 322/128 = 2.5.
    #[test]
    fn alpha_falls_with_delay() {
        assert_eq!(after_round(100_000).0.st.alpha, ALPHA_MAX);
        assert_eq!(after_round(200_000).0.st.alpha, ALPHA_MIN);
        let a = after_round(110_000).0.st.alpha;
        assert_eq!(a, (99_000u64 * 1280 / (99_000 + 9_000 * 1242 / 38)) as u32);
        assert_eq!(a, 322);
    }

    /// beta against average delay: 1/8 up to dm/10, 1/2 from 8dm/10, linear between (at
    /// da = 45 ms, halfway between 10 and 80 ms, beta = (8*80000 + 24*45000 - 32*10000)/70000
    /// = 20/64 = 0.3125).
    #[test]
    fn beta_rises_with_delay() {
        assert_eq!(after_round(105_000).0.st.beta, BETA_MIN);
        assert_eq!(after_round(180_000).0.st.beta, BETA_MAX);
        assert_eq!(after_round(145_000).0.st.beta, 20);
        let (mut i, _) = after_round(105_000);
        assert_eq!(i.ssthresh(&tp(100)), 100 - ((100 * 8) >> 6), "a loss at low delay keeps 7/8");
        let (mut i, _) = after_round(180_000);
        assert_eq!(i.ssthresh(&tp(100)), 50, "at high delay, half");
    }

    /// Small windows are Reno's; an RTO resets alpha and beta to Reno's too.
    #[test]
    fn reno_below_win_thresh_and_after_timeout() {
        let mut t = tp(10);
        let mut i = Illinois::default();
        i.init(&mut t);
        t.delivered = 11;
        i.cong_avoid(&mut t, 1);
        assert_eq!((i.st.alpha, i.st.beta), (ALPHA_BASE, BETA_BASE));
        let (mut i, mut t) = after_round(105_000);
        i.set_state(&mut t, CaState::Loss);
        assert_eq!((i.st.alpha, i.st.beta), (ALPHA_BASE, BETA_BASE));
    }

    /// After congestion, alpha stays put for theta - 1 low-delay rounds and returns to
    /// its maximum on the theta-th.
    #[test]
    fn alpha_returns_to_max_after_theta_good_rounds() {
        let (mut i, _) = after_round(150_000);
        let congested = i.st.alpha;
        assert!(i.st.rtt_above);
        for n in 1..=5 {
            let a = i.alpha(0, 100_000);
            if n < 5 {
                assert_eq!(a, congested, "round {n}");
            } else {
                assert_eq!(a, ALPHA_MAX);
            }
        }
    }

    /// The increase: alpha packets per window of ACKs. With alpha 10 from cwnd 100, one
    /// packet per ceil(cwnd/10) ACKs: 10 ACKs for the first, 11 for each next, so 100 ACKs
    /// add 9 (the window grows on the way).
    #[test]
    fn increase_is_alpha_per_rtt() {
        let (mut i, mut t) = after_round(100_000);
        assert_eq!(i.st.alpha, ALPHA_MAX);
        t.snd_cwnd = 100;
        t.snd_cwnd_cnt = 0;
        t.packets_in_flight = 1000; // no round end during the test
        i.st.round.start(&t);
        for _ in 0..100 {
            i.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 109);
    }
}
