//! H-TCP (D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004; Leith, Shorten, Lee, "H-TCP: A framework for congestion control in
//! high-speed and long-distance networks", Hamilton Institute TR 2005), as Linux runs it
//! in `net/ipv4/tcp_htcp.c`.
//!
//! The additive increase depends on the time Δ since the last congestion event: Reno's
//! one packet per RTT for Δ <= 1 s, then alpha(Δ) = 1 + 10(Δ - 1) + ((Δ - 1)/2)^2, made
//! RTT-fair by scaling with minRTT/100 ms (`use_rtt_scaling`) and multiplied by
//! 2(1 - beta) so that the average window matches Reno's. The decrease is adaptive:
//! beta = minRTT/maxRTT clamped to [0.5, 0.8], falling back to 0.5 when the achieved
//! throughput moved by more than 20% between congestion events (`use_bandwidth_switch`).
//!
//! Integer arithmetic follows Linux: alpha and beta are fixed point << 7, times and RTTs
//! are in jiffies (`TcpState::hz`, 1000 by default).

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, AckSample, CaState, CongestionControl, TcpState};

/// 1.0 in alpha's fixed point (<< 7).
pub const ALPHA_BASE: u32 = 1 << 7;
/// Smallest beta, 0.5 << 7.
pub const BETA_MIN: u32 = 1 << 6;
/// Largest beta, 0.8 << 7 (102/128 = 0.797).
pub const BETA_MAX: u32 = 102;

/// Tunables, with Linux's module-parameter names and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Scale alpha by minRTT / 100 ms so flows with different RTTs grow alike (Linux 1).
    pub use_rtt_scaling: bool,
    /// Reset beta to 0.5 when the achieved throughput changed by more than 20% (Linux 1).
    pub use_bandwidth_switch: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { use_rtt_scaling: true, use_bandwidth_switch: true }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::switch(
        "use_rtt_scaling",
        true,
        "scale the increase by minRTT/100ms for RTT fairness",
    ),
    ParamSpec::switch(
        "use_bandwidth_switch",
        true,
        "beta back to 0.5 when throughput changed by over 20%",
    ),
];

/// Per-flow state (Linux `struct htcp`). Times and RTTs in jiffies.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Additive increase per RTT, << 7.
    pub alpha: u32,
    /// Fraction of cwnd kept on a loss, << 7.
    pub beta: u32,
    /// Adaptive beta allowed (set after the first congestion event).
    pub modeswitch: bool,
    /// Packets the last ACK covered (counted by `cong_avoid`).
    pub pkts_acked: u32,
    /// Packets ACKed since `lasttime` (throughput measurement).
    pub packetcount: u32,
    pub min_rtt: u32,
    pub max_rtt: u32,
    /// Time of the last congestion event, jiffies.
    pub last_cong: u32,
    pub undo_last_cong: u32,
    pub undo_max_rtt: u32,
    pub undo_old_maxb: u32,
    /// Throughput estimates, packets per second.
    pub min_b: u32,
    pub max_b: u32,
    pub old_max_b: u32,
    pub bi: u32,
    pub lasttime: u32,
}

impl Default for State {
    /// As Linux's `htcp_init` leaves it (alpha 1.0, beta 0.5), apart from `last_cong`,
    /// which `init` sets to the current time.
    fn default() -> Self {
        State {
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_maxb: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: Config,
    st: State,
    /// The sender's jiffy rate, kept to report RTTs in microseconds.
    hz: u32,
}

impl Default for Htcp {
    fn default() -> Self {
        Htcp::new(Config::default())
    }
}

impl Htcp {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "htcp",
        summary: "H-TCP: increase grows with time since the last loss; beta = minRTT/maxRTT",
        source: "Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Htcp {
        Htcp { cfg, st: State::default(), hz: 1000 }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.st.last_cong)
    }

    fn reset(&mut self, now: u32) {
        let st = &mut self.st;
        st.undo_last_cong = st.last_cong;
        st.undo_max_rtt = st.max_rtt;
        st.undo_old_maxb = st.old_max_b;
        st.last_cong = now;
    }

    fn measure_rtt(&mut self, tp: &TcpState, srtt: u32) {
        let st = &mut self.st;
        if st.min_rtt > srtt || st.min_rtt == 0 {
            st.min_rtt = srtt;
        }
        if tp.ca_state == CaState::Open {
            if st.max_rtt < st.min_rtt {
                st.max_rtt = st.min_rtt;
            }
            // Ignore jumps of more than 20 ms: likely not queueing on this path.
            if st.max_rtt < srtt && srtt <= st.max_rtt + msecs_to_jiffies(tp.hz, 20) {
                st.max_rtt = srtt;
            }
        }
    }

    fn beta_update(&mut self, hz: u32) {
        let st = &mut self.st;
        if self.cfg.use_bandwidth_switch {
            let (max_b, old) = (st.max_b as u64, st.old_max_b as u64);
            st.old_max_b = st.max_b;
            if !(4 * old <= 5 * max_b && 5 * max_b <= 6 * old) {
                st.beta = BETA_MIN;
                st.modeswitch = false;
                return;
            }
        }
        if st.modeswitch && st.min_rtt > msecs_to_jiffies(hz, 10) && st.max_rtt != 0 {
            st.beta = ((st.min_rtt << 7) / st.max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            st.beta = BETA_MIN;
            st.modeswitch = true;
        }
    }

    fn alpha_update(&mut self, now: u32, hz: u32) {
        let min_rtt = self.st.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now);
        if diff > hz {
            diff -= hz;
            let d = diff as u64;
            let h = hz as u64;
            factor = (1 + (10 * d + ((d / 2) * (d / 2) / h)) / h) as u32;
        }
        if self.cfg.use_rtt_scaling && min_rtt != 0 {
            // minRTT / 100 ms, << 3, clamped to [0.5, 10].
            let scale = ((hz << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        self.st.alpha = 2 * factor * ((1 << 7) - self.st.beta);
        if self.st.alpha == 0 {
            self.st.alpha = ALPHA_BASE;
        }
    }

    fn param_update(&mut self, now: u32, hz: u32) {
        self.beta_update(hz);
        self.alpha_update(now, hz);
        // Slowly forget maxRTT, to follow route changes.
        let (min, max) = (self.st.min_rtt, self.st.max_rtt);
        if min > 0 && max > min {
            self.st.max_rtt = min + ((max - min) as u64 * 95 / 100) as u32;
        }
    }
}

/// Linux `msecs_to_jiffies` (rounds up).
fn msecs_to_jiffies(hz: u32, ms: u32) -> u32 {
    ((ms as u64 * hz as u64).div_ceil(1000)) as u32
}

impl CongestionControl for Htcp {
    fn init(&mut self, tp: &mut TcpState) {
        self.st = State { last_cong: tp.jiffies(), ..State::default() };
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.param_update(tp.jiffies(), tp.hz);
        ((tp.snd_cwnd as u64 * self.st.beta as u64) >> 7).max(2) as u32
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if tcp::in_slow_start(tp) {
            tcp::slow_start(tp, acked);
            return;
        }
        // cwnd += alpha / cwnd per ACKed packet.
        if (tp.snd_cwnd_cnt as u64 * self.st.alpha as u64) >> 7 >= tp.snd_cwnd as u64 {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(tp.jiffies(), tp.hz);
        } else {
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(self.st.pkts_acked);
        }
        self.st.pkts_acked = 1;
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        match new_state {
            CaState::Open => {
                if self.st.undo_last_cong != 0 {
                    self.st.last_cong = tp.jiffies();
                    self.st.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(tp.jiffies()),
            CaState::Disorder => {}
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        let st = &mut self.st;
        if st.undo_last_cong != 0 {
            st.last_cong = st.undo_last_cong;
            st.max_rtt = st.undo_max_rtt;
            st.old_max_b = st.undo_old_maxb;
            st.undo_last_cong = 0;
        }
        tcp::reno_undo_cwnd(tp)
    }

    /// Linux `measure_achieved_throughput`.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.hz = tp.hz;
        let now = tp.jiffies();
        if tp.ca_state == CaState::Open {
            self.st.pkts_acked = sample.pkts_acked;
        }
        if let Some(rtt) = sample.rtt_us.filter(|&r| r > 0) {
            self.measure_rtt(tp, tp.usecs_to_jiffies(rtt));
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.st.packetcount = 0;
            self.st.lasttime = now;
            return;
        }
        let st = &mut self.st;
        st.packetcount = st.packetcount.saturating_add(sample.pkts_acked);
        let alpha_int = (st.alpha >> 7).max(1);
        let elapsed = now.wrapping_sub(st.lasttime);
        if st.packetcount >= tp.snd_cwnd.saturating_sub(alpha_int)
            && elapsed >= st.min_rtt
            && st.min_rtt > 0
        {
            let cur_bi = (st.packetcount as u64 * tp.hz as u64 / elapsed as u64) as u32;
            if now.wrapping_sub(st.last_cong) / st.min_rtt <= 3 {
                // Just after a backoff: start afresh.
                st.min_b = cur_bi;
                st.max_b = cur_bi;
                st.bi = cur_bi;
            } else {
                st.bi = ((3 * st.bi as u64 + cur_bi as u64) / 4) as u32;
                st.max_b = st.max_b.max(st.bi);
                if st.min_b > st.max_b {
                    st.min_b = st.max_b;
                }
            }
            st.packetcount = 0;
            st.lasttime = now;
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        match name {
            "use_rtt_scaling" => Some(self.cfg.use_rtt_scaling as u8 as f64),
            "use_bandwidth_switch" => Some(self.cfg.use_bandwidth_switch as u8 as f64),
            _ => None,
        }
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        match name {
            "use_rtt_scaling" => self.cfg.use_rtt_scaling = value != 0.0,
            "use_bandwidth_switch" => self.cfg.use_bandwidth_switch = value != 0.0,
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("alpha", self.st.alpha as f64 / 128.0);
        report("beta", self.st.beta as f64 / 128.0);
        let us_per_jiffy = 1e6 / self.hz as f64;
        report("min_rtt_us", self.st.min_rtt as f64 * us_per_jiffy);
        report("max_rtt_us", self.st.max_rtt as f64 * us_per_jiffy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        t.now_us = 10_000_000;
        t
    }

    /// An H-TCP flow that has seen RTTs `rtts` (ms) in the Open state.
    fn with_rtts(t: &mut TcpState, rtts: &[u32]) -> Htcp {
        let mut h = Htcp::default();
        h.init(t);
        for &ms in rtts {
            h.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_us: Some(ms * 1000), in_flight: 10 });
        }
        h
    }

    /// alpha(Δ) = 1 + 10(Δ - 1) + ((Δ - 1)/2)^2 times 2(1 - beta); with beta 0.5 and
    /// minRTT 100 ms (RTT scale 1): Δ <= 1 s gives 1.0; Δ = 2 s gives 11 (the paper's 11.25
    /// in Linux's integer arithmetic); Δ = 3 s gives 1 + 20 + 1 = 22.
    #[test]
    fn alpha_grows_with_time_since_congestion() {
        let mut t = tp(100);
        let mut h = with_rtts(&mut t, &[100]);
        assert_eq!(h.st.min_rtt, 100);
        for (secs_after, alpha) in [(0.5, 128), (1.0, 128), (2.0, 11 * 128), (3.0, 22 * 128)] {
            let now = h.st.last_cong + (secs_after * 1000.0) as u32;
            h.alpha_update(now, 1000);
            assert_eq!(h.st.alpha, alpha, "Δ = {secs_after} s");
        }
    }

    /// RTT scaling: with minRTT 200 ms the increase per RTT doubles; with 20 ms it is a
    /// fifth, floored at one (Linux's factor is an integer).
    #[test]
    fn alpha_scales_with_min_rtt() {
        let mut t = tp(100);
        let mut h = with_rtts(&mut t, &[200]);
        h.alpha_update(h.st.last_cong + 3000, 1000);
        assert_eq!(h.st.alpha, 2 * 22 * 64 * 2);
        let mut h = with_rtts(&mut t, &[20]);
        h.alpha_update(h.st.last_cong + 3000, 1000);
        assert_eq!(h.st.alpha, 2 * (22 * 8 / 40) * 64);
    }

    /// Adaptive beta = minRTT/maxRTT in [0.5, 0.8]: the first congestion event uses 0.5 and
    /// enables the mode switch; then 100/125 -> 0.8 (102/128), 100/150 -> 85/128, and a
    /// deep queue (100/300) -> 0.5.
    #[test]
    fn beta_adapts_to_the_rtt_ratio() {
        let cases = [
            (&[100, 110, 120, 125][..], 102),
            (&[100, 115, 130, 145, 150][..], 85),
            (&[100, 120, 140, 160, 180, 200, 220, 240, 260, 280, 300][..], 64),
        ];
        for (rtts, beta) in cases {
            let mut t = tp(1000);
            let mut h = with_rtts(&mut t, rtts);
            assert_eq!(h.ssthresh(&t), 500, "first loss: beta 0.5");
            // maxRTT fades by 5% of (max - min) on each event; restore the path's value.
            h.st.max_rtt = *rtts.last().unwrap();
            let ss = h.ssthresh(&t);
            assert_eq!(h.st.beta, beta, "rtts {rtts:?}");
            assert_eq!(ss, (1000 * beta) >> 7);
        }
    }

    /// The bandwidth switch: a throughput change of more than 20% between congestion
    /// events sends beta back to 0.5.
    #[test]
    fn bandwidth_switch_resets_beta() {
        let mut t = tp(1000);
        let mut h = with_rtts(&mut t, &[100, 110, 120, 125]);
        h.ssthresh(&t);
        h.st.max_rtt = 125;
        h.st.max_b = 1000;
        h.st.old_max_b = 1000;
        h.ssthresh(&t);
        assert_eq!(h.st.beta, 102);
        h.st.max_b = 1500; // +50%
        h.ssthresh(&t);
        assert_eq!(h.st.beta, BETA_MIN);
    }

    /// Congestion avoidance adds alpha packets per window of ACKs: with alpha 4 at cwnd
    /// 100, the 26th ACK finds 25 * 4 >= 100 and adds the packet (Linux counts before it
    /// adds). Each increment recomputes alpha, here 1.0 since Δ < 1 s.
    #[test]
    fn increase_is_alpha_per_round() {
        let mut t = tp(100);
        let mut h = with_rtts(&mut t, &[100]);
        h.st.alpha = 4 * 128;
        t.snd_cwnd = 100;
        for _ in 0..25 {
            h.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 100);
        h.cong_avoid(&mut t, 1);
        assert_eq!(t.snd_cwnd, 101);
        assert_eq!(h.st.alpha, 128, "recomputed after the increment: Δ < 1 s gives 1.0");
    }
}
