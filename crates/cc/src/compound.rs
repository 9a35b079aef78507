//! Compound TCP (K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for
//! High-speed and Long Distance Networks", IEEE INFOCOM 2006; M. Sridharan, K. Tan,
//! D. Bansal, D. Thaler, "Compound TCP: A New TCP Congestion Control for High-Speed and
//! Long Distance Networks", draft-sridharan-tcpm-ctcp-02, 2008).
//!
//! CTCP sends `win = cwnd + dwnd`: a loss-based Reno window plus a delay-based window.
//! Once per RTT it estimates the packets it keeps queued,
//! `diff = (win/baseRTT - win/RTT) baseRTT`; while `diff < gamma` (30 packets) the delay
//! window grows by `alpha win^k - 1` (alpha 1/8, k 3/4: together with Reno's +1 a
//! HighSpeed-like increase), and once queueing exceeds gamma it gives back `zeta diff`
//! (zeta 1). On a loss, Reno's window halves and dwnd becomes `(win (1 - beta) - cwnd/2)+`
//! (beta 1/2), so the total keeps `1 - beta` of win. Reno's window grows by 1/win per
//! ACK. The delay window grows only once the window reaches `low_wnd` so that CTCP is
//! Reno on small paths (41 packets here, our reading of the draft's low-window threshold;
//! we could not check the figure against the draft's text while writing this, so it is a
//! parameter), is zero in slow start, and is dropped on a timeout.
//!
//! How it maps onto one `snd_cwnd`: the sender knows a single window, so
//! `tp.snd_cwnd = lwnd + floor(dwnd)`, where `lwnd` is the draft's loss window ("cwnd")
//! and `dwnd` is kept here as a real number of packets. Whenever the sender changed
//! `snd_cwnd` itself (recovery, undo, timeout), the next ACK re-derives
//! `lwnd = snd_cwnd - floor(dwnd)`, shrinking dwnd first if the window became smaller.
//! RTT is the smallest sample of the last round and baseRTT the smallest ever (as in the
//! Vegas-derived Linux CTCP patch by Castellani, Hemminger and Andrew); rounds are
//! counted with [`RoundTracker`](crate::vegas::RoundTracker). There is no Linux module in
//! mainline; this follows the paper and the draft.

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::vegas::RoundTracker;
use crate::{tcp, AckSample, CaEvent, CaState, CongestionControl, TcpState};

/// Tunables; defaults from the paper (Section IV) and the draft.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Scale of the delay window's increase, alpha win^k per RTT (1/8).
    pub alpha: f64,
    /// Multiplicative decrease of the whole window on a loss (1/2).
    pub beta: f64,
    /// Exponent of the increase; 0.75 makes CTCP as aggressive as HighSpeed TCP.
    pub k: f64,
    /// Queued packets at which the delay window starts to give back (30).
    pub gamma: f64,
    /// How much of the queue estimate dwnd gives back per RTT above gamma (1).
    pub zeta: f64,
    /// Window below which dwnd is not grown, packets (41).
    pub low_wnd: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { alpha: 0.125, beta: 0.5, k: 0.75, gamma: 30.0, zeta: 1.0, low_wnd: 41 }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::float_open_min(
        "alpha",
        0.125,
        0.0,
        10.0,
        "",
        "delay window increase alpha * win^k per RTT",
    ),
    ParamSpec::float_open_min(
        "beta",
        0.5,
        0.0,
        1.0,
        "",
        "fraction of the window given up on a loss",
    ),
    ParamSpec::float("k", 0.75, 0.0, 1.0, "", "exponent of the delay window increase"),
    ParamSpec::float(
        "gamma",
        30.0,
        0.0,
        100_000.0,
        "packets",
        "queued packets above which dwnd shrinks",
    ),
    ParamSpec::float(
        "zeta",
        1.0,
        0.0,
        100.0,
        "",
        "dwnd gives back zeta * diff per RTT above gamma",
    ),
    ParamSpec::int(
        "low_wnd",
        41,
        0,
        0x7fff_ffff,
        "packets",
        "window below which the delay window does not grow",
    ),
];

/// Per-flow state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Loss-based (Reno) window, packets: the draft's cwnd.
    pub lwnd: u32,
    /// ACKed packets towards the next lwnd increment.
    pub lwnd_cnt: u32,
    /// Delay-based window, packets.
    pub dwnd: f64,
    /// Smallest RTT ever, µs (`u32::MAX` before any sample).
    pub base_rtt_us: u32,
    /// Smallest RTT in the current round, µs.
    pub round_min_rtt_us: u32,
    /// Samples in the current round.
    pub cnt_rtt: u32,
    /// Queue estimate at the last round's end, packets.
    pub diff: f64,
    pub round: RoundTracker,
}

impl Default for State {
    fn default() -> Self {
        State {
            lwnd: 0,
            lwnd_cnt: 0,
            dwnd: 0.0,
            base_rtt_us: u32::MAX,
            round_min_rtt_us: u32::MAX,
            cnt_rtt: 0,
            diff: 0.0,
            round: RoundTracker::default(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Compound {
    cfg: Config,
    st: State,
}

impl Compound {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "compound",
        summary: "Compound TCP: Reno window plus a delay window that grows alpha*win^k while < gamma packets queue",
        source: "Tan et al., INFOCOM 2006; draft-sridharan-tcpm-ctcp-02",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Compound {
        Compound { cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    fn dwnd_packets(&self) -> u32 {
        self.st.dwnd as u32
    }

    /// Takes the sender's window as the truth: lwnd = snd_cwnd - floor(dwnd), with dwnd
    /// first reduced if the window is now smaller than dwnd.
    fn reconcile(&mut self, tp: &TcpState) {
        let total = tp.snd_cwnd;
        if self.st.lwnd + self.dwnd_packets() == total {
            return;
        }
        if self.st.dwnd > total.saturating_sub(1) as f64 {
            self.st.dwnd = total.saturating_sub(1) as f64;
        }
        self.st.lwnd = total - self.dwnd_packets();
    }

    fn set_window(&self, tp: &mut TcpState) {
        tp.snd_cwnd = (self.st.lwnd + self.dwnd_packets()).clamp(1, tp.snd_cwnd_clamp);
    }

    /// The once-per-RTT delay window update (paper Eq. 5 / draft Section 3).
    fn end_of_round(&mut self, tp: &TcpState) {
        if self.st.cnt_rtt < 1 || self.st.base_rtt_us == u32::MAX || tcp::in_slow_start(tp) {
            return;
        }
        let win = tp.snd_cwnd as f64;
        let base = self.st.base_rtt_us as f64;
        let rtt = self.st.round_min_rtt_us as f64;
        // (win/base - win/rtt) * base = win (rtt - base) / rtt.
        let diff = win * (rtt - base) / rtt;
        self.st.diff = diff;
        if diff < self.cfg.gamma {
            if tp.snd_cwnd >= self.cfg.low_wnd {
                self.st.dwnd += (self.cfg.alpha * win.powf(self.cfg.k) - 1.0).max(0.0);
            }
        } else {
            self.st.dwnd = (self.st.dwnd - self.cfg.zeta * diff).max(0.0);
        }
        // dwnd cannot exceed what the clamp allows.
        let room = tp.snd_cwnd_clamp.saturating_sub(self.st.lwnd) as f64;
        self.st.dwnd = self.st.dwnd.min(room);
    }
}

impl CongestionControl for Compound {
    fn init(&mut self, tp: &mut TcpState) {
        self.st = State { lwnd: tp.snd_cwnd, ..State::default() };
        self.st.round.start(tp);
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt_us else { return };
        let rtt = rtt.max(1);
        self.st.base_rtt_us = self.st.base_rtt_us.min(rtt);
        self.st.round_min_rtt_us = self.st.round_min_rtt_us.min(rtt);
        self.st.cnt_rtt += 1;
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        self.reconcile(tp);
        if self.st.round.is_over(tp) {
            self.end_of_round(tp);
            self.st.round.start(tp);
            self.st.cnt_rtt = 0;
            self.st.round_min_rtt_us = u32::MAX;
            self.set_window(tp);
        }
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if tcp::in_slow_start(tp) {
            // Slow start grows the loss window; dwnd is zero there.
            self.st.dwnd = 0.0;
            tcp::slow_start(tp, acked);
            self.st.lwnd = tp.snd_cwnd;
            return;
        }
        // Reno's window: +1/win per ACKed packet.
        self.st.lwnd_cnt = self.st.lwnd_cnt.saturating_add(acked);
        let win = tp.snd_cwnd.max(1);
        if self.st.lwnd_cnt >= win {
            self.st.lwnd += self.st.lwnd_cnt / win;
            self.st.lwnd_cnt %= win;
        }
        self.set_window(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.reconcile(tp);
        let win = tp.snd_cwnd as f64;
        let lwnd = self.st.lwnd / 2;
        self.st.dwnd = (win * (1.0 - self.cfg.beta) - lwnd as f64).max(0.0);
        self.st.lwnd = lwnd.max(1);
        self.st.lwnd_cnt = 0;
        (self.st.lwnd + self.dwnd_packets()).max(2)
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            // A timeout: the delay window is dropped; slow start rebuilds the loss window.
            self.st.dwnd = 0.0;
            self.st.lwnd = tp.snd_cwnd;
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.st.round.start(tp);
            self.st.cnt_rtt = 0;
            self.st.round_min_rtt_us = u32::MAX;
        }
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        let c = &self.cfg;
        Some(match name {
            "alpha" => c.alpha,
            "beta" => c.beta,
            "k" => c.k,
            "gamma" => c.gamma,
            "zeta" => c.zeta,
            "low_wnd" => c.low_wnd as f64,
            _ => return None,
        })
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        let c = &mut self.cfg;
        match name {
            "alpha" => c.alpha = value,
            "beta" => c.beta = value,
            "k" => c.k = value,
            "gamma" => c.gamma = value,
            "zeta" => c.zeta = value,
            "low_wnd" => c.low_wnd = value as u32,
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("lwnd", self.st.lwnd as f64);
        report("dwnd", self.st.dwnd);
        report("diff", self.st.diff);
        if self.st.base_rtt_us != u32::MAX {
            report("base_rtt_us", self.st.base_rtt_us as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CTCP flow in congestion avoidance with baseRTT 100 ms and lwnd = cwnd.
    fn flow(cwnd: u32) -> (Compound, TcpState) {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        let mut c = Compound::default();
        c.init(&mut t);
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_us: Some(100_000), in_flight: cwnd });
        (c, t)
    }

    /// Ends the current round with RTT samples of `rtt_ms`: the next ACK triggers the update.
    fn end_round(c: &mut Compound, t: &mut TcpState, rtt_ms: u32) {
        c.st.cnt_rtt = 0;
        c.st.round_min_rtt_us = u32::MAX;
        c.pkts_acked(
            t,
            &AckSample { pkts_acked: 1, rtt_us: Some(rtt_ms * 1000), in_flight: t.snd_cwnd },
        );
        t.delivered = t.delivered.wrapping_add(t.packets_in_flight + 1);
        c.st.lwnd_cnt = 0;
        t.snd_cwnd_cnt = 0;
        c.cong_avoid(t, 0);
    }

    /// No queue (RTT = baseRTT): dwnd grows by alpha win^k - 1 per RTT. At win 100:
    /// 0.125 * 100^0.75 - 1 = 2.95 packets, and cwnd = lwnd + floor(dwnd) = 102.
    #[test]
    fn dwnd_grows_by_alpha_win_to_the_k() {
        let (mut c, mut t) = flow(100);
        end_round(&mut c, &mut t, 100);
        let expect = 0.125 * 100f64.powf(0.75) - 1.0;
        assert!((c.st.dwnd - expect).abs() < 1e-9, "dwnd {}", c.st.dwnd);
        assert_eq!(t.snd_cwnd, 102);
        assert_eq!(c.st.lwnd, 100);
        // Next round at win 102 adds 0.125 * 102^0.75 - 1.
        end_round(&mut c, &mut t, 100);
        let expect2 = expect + 0.125 * 102f64.powf(0.75) - 1.0;
        assert!((c.st.dwnd - expect2).abs() < 1e-9);
    }

    /// Queueing above gamma: diff = win (RTT - base)/RTT; at win 200 and RTT 125 ms that
    /// is 40 packets (>= 30), so dwnd gives back 40: from 100 to 60, and cwnd from 200 to
    /// 160. Below gamma (RTT 110 ms: diff 18) dwnd keeps growing.
    #[test]
    fn dwnd_shrinks_by_diff_above_gamma() {
        let (mut c, mut t) = flow(100);
        c.st.dwnd = 100.0;
        t.snd_cwnd = 200;
        end_round(&mut c, &mut t, 125);
        assert!((c.st.diff - 40.0).abs() < 1e-9);
        assert_eq!(c.st.dwnd, 60.0);
        assert_eq!(t.snd_cwnd, 160);

        let (mut c, mut t) = flow(100);
        c.st.dwnd = 100.0;
        t.snd_cwnd = 200;
        end_round(&mut c, &mut t, 110);
        assert!(c.st.diff < 30.0 && c.st.dwnd > 100.0);
    }

    /// On a loss the whole window keeps 1 - beta: win 100 = lwnd 60 + dwnd 40 gives
    /// lwnd 30 and dwnd 100/2 - 30 = 20, ssthresh 50. When Reno's window alone is the
    /// larger part (lwnd 100, dwnd 0) it is Reno's half.
    #[test]
    fn loss_keeps_one_minus_beta_of_the_window() {
        let (mut c, mut t) = flow(60);
        c.st.dwnd = 40.0;
        t.snd_cwnd = 100;
        c.reconcile(&t);
        assert_eq!(c.st.lwnd, 60);
        assert_eq!(c.ssthresh(&t), 50);
        assert_eq!((c.st.lwnd, c.st.dwnd), (30, 20.0));
        let (mut c, t) = flow(100);
        assert_eq!(c.ssthresh(&t), 50);
        assert_eq!(c.st.dwnd, 0.0);
    }

    /// Below low_wnd (41) CTCP is Reno: no delay window.
    #[test]
    fn reno_below_low_window() {
        let (mut c, mut t) = flow(30);
        end_round(&mut c, &mut t, 100);
        assert_eq!(c.st.dwnd, 0.0);
        assert_eq!(t.snd_cwnd, 30);
        // The loss window grows 1/win per ACK: 30 ACKs add one.
        for _ in 0..30 {
            c.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 31);
    }

    /// A timeout drops dwnd; a window set by the sender is taken as the truth.
    #[test]
    fn timeout_drops_the_delay_window() {
        let (mut c, mut t) = flow(100);
        c.st.dwnd = 50.0;
        t.snd_cwnd = 1;
        c.set_state(&mut t, CaState::Loss);
        assert_eq!((c.st.lwnd, c.st.dwnd), (1, 0.0));
        let (mut c, mut t) = flow(100);
        c.st.dwnd = 50.0;
        t.snd_cwnd = 30; // smaller than dwnd: dwnd shrinks first
        c.reconcile(&t);
        assert_eq!(c.st.lwnd + c.st.dwnd as u32, 30);
    }
}
