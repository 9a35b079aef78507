//! BIC TCP (L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control for Fast,
//! Long Distance Networks", IEEE INFOCOM 2004), as Linux runs it in `net/ipv4/tcp_bic.c`.
//!
//! After a loss BIC binary-searches between the window it fell to and the window where
//! the loss happened (`last_max_cwnd`): each RTT it moves a quarter of the remaining
//! distance (`BICTCP_B` = 4), at most `max_increment` = 16 packets (linear increase when
//! far away), at least a fifth of a packet near the target (`smooth_part` = 20 RTTs over
//! the last B packets). Past `last_max_cwnd` it probes symmetrically ("max probing"),
//! slowly at first and then up to `max_increment` per RTT. Below `low_window` = 14 packets
//! it is Reno. A loss keeps `beta` = 819/1024 (0.8) of cwnd; with fast convergence a flow
//! that lost below its previous maximum remembers a lower maximum, (1 + beta)/2 of cwnd.
//!
//! Integer arithmetic and the update order follow Linux: `cnt` (ACKs per one-packet
//! increase) is recomputed at most every HZ/32 jiffies unless cwnd changed, then scaled
//! by the measured ACK ratio (`delayed_ack`, packets per ACK << 4, initially 2).

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CaState, CongestionControl, TcpState};

/// Linux `BICTCP_BETA_SCALE`: beta is kept as an integer out of 1024.
pub const BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_B`: the binary search goes to (max + min) / B each step.
pub const B: u32 = 4;
/// Linux `ACK_RATIO_SHIFT`: `delayed_ack` is packets per ACK << 4.
const ACK_RATIO_SHIFT: u32 = 4;

/// Tunables, with Linux's module-parameter names and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Lower the remembered maximum when a loss comes below the previous one (Linux 1).
    pub fast_convergence: bool,
    /// Largest increase per RTT during the search, in packets (Linux 16).
    pub max_increment: u32,
    /// Below this window BIC is Reno, in packets (Linux 14).
    pub low_window: u32,
    /// Multiplicative decrease factor kept after a loss (Linux 819/1024 = 0.8). Written as
    /// the factor in scenario files and converted to the kernel's /1024 integer inside.
    pub beta: f64,
    /// Slow-start threshold at start in packets; 0 leaves the sender's (Linux 0).
    pub initial_ssthresh: u32,
    /// RTTs spent on the last B packets before the maximum (Linux 20).
    pub smooth_part: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            beta: 0.8,
            initial_ssthresh: 0,
            smooth_part: 20,
        }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::switch(
        "fast_convergence",
        true,
        "lower W_max when a loss comes before the previous maximum",
    ),
    ParamSpec::int(
        "max_increment",
        16,
        1,
        65_535,
        "packets",
        "largest cwnd increase per RTT during the binary search",
    ),
    ParamSpec::int("low_window", 14, 2, 65_535, "packets", "below this window BIC behaves as Reno"),
    ParamSpec::float_open_min(
        "beta",
        0.8,
        0.0,
        1.0,
        "",
        "fraction of cwnd kept after a loss (Linux 819/1024)",
    ),
    ParamSpec::int(
        "initial_ssthresh",
        0,
        0,
        0x7fff_ffff,
        "packets",
        "initial slow-start threshold; 0 = the sender's default",
    ),
    ParamSpec::int(
        "smooth_part",
        20,
        1,
        1000,
        "RTTs",
        "RTTs to cover the last B packets below W_max",
    ),
];

/// Per-flow state (Linux `struct bictcp`).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// ACKs per one-packet increase.
    pub cnt: u32,
    /// cwnd at the last loss (after fast convergence), packets: the search target.
    pub last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed.
    pub last_cwnd: u32,
    /// When `cnt` was last computed, jiffies.
    pub last_time: u32,
    /// Start of the current epoch (first ACK after a loss), jiffies; 0 = none.
    pub epoch_start: u32,
    /// Packets per ACK, << 4.
    pub delayed_ack: u32,
}

impl Default for State {
    fn default() -> Self {
        State {
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bic {
    cfg: Config,
    beta: u32,
    st: State,
}

impl Default for Bic {
    fn default() -> Self {
        Bic::new(Config::default())
    }
}

impl Bic {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "bic",
        summary: "BIC: binary search towards the last loss window, then max probing",
        source: "Xu, Harfoush, Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Bic {
        let beta = beta_to_kernel(cfg.beta);
        Bic { cfg, beta, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    /// Linux `bictcp_update`: how many ACKs buy one packet at window `cwnd`.
    fn update(&mut self, cwnd: u32, now: u32, hz: u32) {
        let st = &mut self.st;
        if st.last_cwnd == cwnd && (now.wrapping_sub(st.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }
        st.last_cwnd = cwnd;
        st.last_time = now;
        if st.epoch_start == 0 {
            st.epoch_start = now;
        }
        if cwnd <= self.cfg.low_window {
            st.cnt = cwnd;
            return;
        }
        let max_inc = self.cfg.max_increment;
        let smooth = self.cfg.smooth_part;
        if cwnd < st.last_max_cwnd {
            // Binary search: a quarter of the distance per RTT, between 1/smooth and max_inc.
            let dist = (st.last_max_cwnd - cwnd) / B;
            st.cnt = if dist > max_inc {
                cwnd / max_inc
            } else if dist <= 1 {
                cwnd * smooth / B
            } else {
                cwnd / dist
            };
        } else {
            // Max probing: slow near the old maximum, faster away from it, then linear.
            st.cnt = if cwnd < st.last_max_cwnd + B {
                cwnd * smooth / B
            } else if cwnd < st.last_max_cwnd + max_inc * (B - 1) {
                cwnd * (B - 1) / (cwnd - st.last_max_cwnd)
            } else {
                cwnd / max_inc
            };
        }
        // Before the first loss: at least 5% growth per RTT.
        if st.last_max_cwnd == 0 && st.cnt > 20 {
            st.cnt = 20;
        }
        st.cnt = (st.cnt << ACK_RATIO_SHIFT) / st.delayed_ack;
        if st.cnt == 0 {
            st.cnt = 1;
        }
    }
}

/// 0.8 -> 819, as Linux's default.
fn beta_to_kernel(beta: f64) -> u32 {
    ((beta * BETA_SCALE as f64) as u32).clamp(1, BETA_SCALE)
}

impl CongestionControl for Bic {
    fn init(&mut self, tp: &mut TcpState) {
        self.st = State::default();
        if self.cfg.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.st.epoch_start = 0;
        self.st.last_max_cwnd = if cwnd < self.st.last_max_cwnd && self.cfg.fast_convergence {
            ((cwnd as u64 * (BETA_SCALE + self.beta) as u64) / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            ((cwnd as u64 * self.beta as u64 / BETA_SCALE as u64) as u32).max(2)
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if tcp::in_slow_start(tp) {
            tcp::slow_start(tp, acked);
        } else {
            self.update(tp.snd_cwnd, tp.jiffies(), tp.hz);
            tcp::cong_avoid_ai(tp, self.st.cnt, 1);
        }
    }

    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.st = State::default();
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if tp.ca_state == CaState::Open {
            // delayed_ack = 15/16 delayed_ack + pkts_acked (an EWMA of packets per ACK << 4).
            let d = self.st.delayed_ack;
            self.st.delayed_ack =
                d.wrapping_add(sample.pkts_acked).wrapping_sub(d >> ACK_RATIO_SHIFT);
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        let c = &self.cfg;
        Some(match name {
            "fast_convergence" => c.fast_convergence as u8 as f64,
            "max_increment" => c.max_increment as f64,
            "low_window" => c.low_window as f64,
            "beta" => c.beta,
            "initial_ssthresh" => c.initial_ssthresh as f64,
            "smooth_part" => c.smooth_part as f64,
            _ => return None,
        })
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        let c = &mut self.cfg;
        match name {
            "fast_convergence" => c.fast_convergence = value != 0.0,
            "max_increment" => c.max_increment = value as u32,
            "low_window" => c.low_window = value as u32,
            "beta" => {
                c.beta = value;
                self.beta = beta_to_kernel(value);
            }
            "initial_ssthresh" => c.initial_ssthresh = value as u32,
            "smooth_part" => c.smooth_part = value as u32,
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("last_max_cwnd", self.st.last_max_cwnd as f64);
        report("cnt", self.st.cnt as f64);
        report("delayed_ack", self.st.delayed_ack as f64 / (1 << ACK_RATIO_SHIFT) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        t.now_us = 1_000_000;
        t
    }

    /// One ACK per packet (pkts_acked 1 each) so that delayed_ack converges to 1 << 4.
    fn bic_with_ack_ratio_one() -> Bic {
        let mut b = Bic::default();
        b.st.delayed_ack = 1 << ACK_RATIO_SHIFT;
        b
    }

    /// cnt computed at cwnd after a loss at `max`.
    fn cnt(b: &mut Bic, cwnd: u32, max: u32) -> u32 {
        b.st.last_max_cwnd = max;
        b.st.last_cwnd = 0;
        let mut t = tp(cwnd);
        b.cong_avoid(&mut t, 1);
        b.st.cnt
    }

    /// The binary search from Xu et al.: far from W_max the increase is max_increment (16)
    /// per RTT (cnt = cwnd/16); at distance d it is d/4 per RTT (cnt = cwnd/(d/4)); within
    /// 4 packets it is B/smooth_part = 0.2 per RTT (cnt = cwnd*20/4).
    #[test]
    fn binary_search_increments() {
        let mut b = bic_with_ack_ratio_one();
        assert_eq!(cnt(&mut b, 800, 1000), 800 / 16, "linear: 16 packets per RTT");
        assert_eq!(cnt(&mut b, 960, 1000), 960 / 10, "a quarter of the 40 left: 10 per RTT");
        assert_eq!(cnt(&mut b, 997, 1000), 997 * 20 / 4, "within B: one packet per 5 RTTs");
        // Max probing past W_max: slow first, cwnd*(B-1)/(cwnd-max) in the middle, then 16.
        assert_eq!(cnt(&mut b, 1002, 1000), 1002 * 20 / 4);
        assert_eq!(cnt(&mut b, 1010, 1000), 1010 * 3 / 10);
        assert_eq!(cnt(&mut b, 1100, 1000), 1100 / 16);
    }

    /// Growth per RTT, measured by driving a window of ACKs: from 800 towards 1000 the
    /// first RTT adds max_increment = 16 packets. From 960 the target is a quarter of the
    /// 40 left, but Linux recomputes cnt each time cwnd grows, so the distance decays
    /// continuously, d' = -d/(4 cwnd) per ACK: one RTT closes 40 (1 - e^-1/4) = 8.8, and
    /// integer division makes it 8.
    #[test]
    fn one_rtt_of_acks_moves_a_quarter_of_the_distance() {
        for (start, expect) in [(800, 16), (960, 8)] {
            let mut b = bic_with_ack_ratio_one();
            b.st.last_max_cwnd = 1000;
            let mut t = tp(start);
            for _ in 0..start {
                t.now_us += 100; // 0.1 ms apart: cnt is recomputed only when cwnd changes
                b.cong_avoid(&mut t, 1);
            }
            let grew = t.snd_cwnd - start;
            assert!(
                grew.abs_diff(expect) <= 1,
                "from {start}: grew {grew}, expected about {expect}"
            );
        }
    }

    /// Below low_window BIC is Reno, and before any loss cnt is capped at 20 (5% per RTT).
    #[test]
    fn reno_below_low_window_and_five_percent_before_first_loss() {
        let mut b = bic_with_ack_ratio_one();
        assert_eq!(cnt(&mut b, 10, 0), 10);
        assert_eq!(cnt(&mut b, 1000, 0), 20);
        // Linux's default ACK ratio (2 packets per ACK) halves cnt.
        let mut b = Bic::default();
        assert_eq!(cnt(&mut b, 1000, 0), 10);
    }

    /// Decrease: keep 819/1024 of cwnd; fast convergence remembers (1024+819)/2048 of cwnd
    /// when the loss comes below the previous maximum; Reno's half below low_window.
    #[test]
    fn loss_decrease_and_fast_convergence() {
        let mut b = Bic::default();
        let t = tp(1000);
        assert_eq!(b.ssthresh(&t), 1000 * 819 / 1024);
        assert_eq!(b.st.last_max_cwnd, 1000);
        let t = tp(900);
        assert_eq!(b.ssthresh(&t), 900 * 819 / 1024);
        assert_eq!(b.st.last_max_cwnd, 900 * (1024 + 819) / 2048);
        assert_eq!(b.ssthresh(&tp(12)), 6);
        let mut slow = Bic::default();
        slow.apply_param("fast_convergence", 0.0);
        slow.st.last_max_cwnd = 1000;
        slow.ssthresh(&tp(900));
        assert_eq!(slow.st.last_max_cwnd, 900);
    }

    /// The ACK ratio is an EWMA: one packet per ACK pulls it from 2 towards 1.
    #[test]
    fn ack_ratio_tracks_packets_per_ack() {
        let mut b = Bic::default();
        let mut t = tp(100);
        for _ in 0..200 {
            b.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_us: Some(1000), in_flight: 10 });
        }
        assert_eq!(b.st.delayed_ack >> ACK_RATIO_SHIFT, 1);
        // beta set as a factor maps to the kernel integer.
        let mut a = crate::Algorithm::new("bic").unwrap();
        a.set_param("beta", 0.5).unwrap();
        assert_eq!(a.ssthresh(&tp(1000)), 500);
    }
}
