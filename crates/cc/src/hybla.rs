//! TCP Hybla (C. Caini, R. Firrincieli, "TCP Hybla: a TCP Enhancement for Heterogeneous
//! Networks", International Journal of Satellite Communications and Networking 22(5),
//! 2004), as Linux runs it in `net/ipv4/tcp_hybla.c`.
//!
//! Hybla makes a long-RTT flow grow, per unit of time, like a flow with the reference RTT
//! `rtt0` = 25 ms. With rho = RTT / rtt0 (at least 1), each ACK adds 2^rho - 1 packets in
//! slow start and rho^2 / cwnd in congestion avoidance, so the window grows rho^2 packets
//! per RTT, i.e. as fast in time as the reference flow's. Loss handling is Reno's.
//!
//! Integer arithmetic follows Linux: rho is kept << 3, rho^2 << 7, sub-packet increments
//! accumulate in `snd_cwnd_cents` (1/128 packet), and 2^fraction(rho) comes from Linux's
//! eight-entry table. rho is recomputed whenever the smoothed RTT reaches a new minimum.
//!
//! Departures from Linux, both for an RTT that is unknown at `init`: Linux sets cwnd to
//! rho at init, which with no RTT sample yet would be rho = 1, one packet; we leave the
//! sender's initial window until a smoothed RTT exists. Linux also remembers that srtt
//! (0) as the minimum, which would stop rho from ever being recomputed; we treat 0 as
//! "no minimum yet".

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, CaState, CongestionControl, TcpState};

/// Linux `hybla_fraction`: 2^(i/8) << 7 for i in 0..8.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

/// Tunables, with Linux's module-parameter name and default.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Reference round-trip time in milliseconds (Linux 25).
    pub rtt0_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { rtt0_ms: 25 }
    }
}

const PARAMS: &[ParamSpec] = &[ParamSpec::int(
    "rtt0",
    25,
    1,
    10_000,
    "ms",
    "reference RTT: flows with longer RTTs grow as fast in time as a flow with this RTT",
)];

/// Per-flow state (Linux `struct hybla`).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Hybla on (off outside the Open state, where Reno applies).
    pub hybla_en: bool,
    /// Accumulated fractional increments, 1/128 packet.
    pub snd_cwnd_cents: u32,
    /// rho, integer part.
    pub rho: u32,
    /// rho^2, integer part.
    pub rho2: u32,
    /// rho << 3.
    pub rho_3ls: u32,
    /// rho^2 << 7.
    pub rho2_7ls: u32,
    /// Smallest smoothed RTT seen, in Linux's << 3 microseconds; `u32::MAX` if none.
    pub minrtt_us: u32,
}

impl Default for State {
    fn default() -> Self {
        State {
            hybla_en: true,
            snd_cwnd_cents: 0,
            rho: 0,
            rho2: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: u32::MAX,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Hybla {
    cfg: Config,
    st: State,
}

impl Hybla {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "hybla",
        summary: "Hybla: long-RTT flows grow rho^2 packets per RTT, rho = RTT/25 ms",
        source: "Caini & Firrincieli, Int. J. Satellite Commun. 2004; Linux net/ipv4/tcp_hybla.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Hybla {
        Hybla { cfg, st: State::default() }
    }

    pub fn state(&self) -> &State {
        &self.st
    }

    /// Linux `hybla_recalc_param`: rho from the smoothed RTT (srtt_us is already << 3).
    fn recalc_param(&mut self, tp: &TcpState) {
        let st = &mut self.st;
        st.rho_3ls = (tp.srtt_us / (self.cfg.rtt0_ms * 1000)).max(8);
        st.rho = st.rho_3ls >> 3;
        st.rho2_7ls = (st.rho_3ls.saturating_mul(st.rho_3ls)).saturating_mul(2);
        st.rho2 = st.rho2_7ls >> 7;
    }
}

impl CongestionControl for Hybla {
    fn init(&mut self, tp: &mut TcpState) {
        self.st = State::default();
        tp.snd_cwnd_clamp = 65535;
        self.recalc_param(tp);
        if tp.srtt_us != 0 {
            self.st.minrtt_us = tp.srtt_us;
            tp.snd_cwnd = self.st.rho.min(tp.snd_cwnd_clamp);
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }

    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        self.st.hybla_en = new_state == CaState::Open;
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if tp.srtt_us != 0 && tp.srtt_us < self.st.minrtt_us {
            self.recalc_param(tp);
            self.st.minrtt_us = tp.srtt_us;
        }
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if !self.st.hybla_en {
            tcp::reno_cong_avoid(tp, acked);
            return;
        }
        if self.st.rho == 0 {
            self.recalc_param(tp);
        }
        let rho_fractions = self.st.rho_3ls - (self.st.rho << 3);
        let slow_start = tcp::in_slow_start(tp);
        let increment: u32 = if slow_start {
            // 2^rho - 1 packets per ACK, << 7: 2^int(rho) * 2^frac(rho) - 1.
            (1u32 << self.st.rho.min(16)) * FRACTIONS[rho_fractions as usize] - 128
        } else {
            // rho^2 / cwnd packets per ACK, << 7.
            let inc = self.st.rho2_7ls / tp.snd_cwnd;
            if inc < 128 {
                tp.snd_cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(increment >> 7);
        self.st.snd_cwnd_cents += odd;
        while self.st.snd_cwnd_cents >= 128 {
            tp.snd_cwnd += 1;
            self.st.snd_cwnd_cents -= 128;
            tp.snd_cwnd_cnt = 0;
        }
        // An increment too small to register: fall back to one packet per window.
        if increment == 0 && odd == 0 && tp.snd_cwnd_cnt >= tp.snd_cwnd {
            tp.snd_cwnd += 1;
            tp.snd_cwnd_cnt = 0;
        }
        if slow_start {
            tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_ssthresh);
        }
        tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        (name == "rtt0").then_some(self.cfg.rtt0_ms as f64)
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        if name == "rtt0" {
            self.cfg.rtt0_ms = value as u32;
            // rho depends on rtt0: recompute on the next ACK.
            self.st.rho = 0;
            self.st.minrtt_us = u32::MAX;
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("rho", self.st.rho_3ls as f64 / 8.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32, ssthresh: u32, srtt_ms: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = ssthresh;
        t.srtt_us = (srtt_ms * 1000) << 3;
        t
    }

    fn hybla(t: &mut TcpState) -> Hybla {
        let mut h = Hybla::default();
        let cwnd = t.snd_cwnd;
        h.init(t);
        t.snd_cwnd = cwnd;
        h
    }

    /// rho = RTT / 25 ms: 200 ms gives rho 8 (rho^2 64); 60 ms gives 2.375 (19/8); anything
    /// up to 25 ms gives 1 (Reno).
    #[test]
    fn rho_scales_with_rtt() {
        let mut t = tp(10, 1000, 200);
        let h = hybla(&mut t);
        assert_eq!((h.st.rho, h.st.rho_3ls, h.st.rho2), (8, 64, 64));
        let mut t = tp(10, 1000, 60);
        assert_eq!(hybla(&mut t).st.rho_3ls, 19);
        let mut t = tp(10, 1000, 10);
        assert_eq!(hybla(&mut t).st.rho, 1);
    }

    /// Slow start adds 2^rho - 1 per ACK: rho 1 doubles per RTT as Reno (+1 per ACK),
    /// rho 2 adds 3, rho 2.375 adds 4.16 (Linux: 4*165/128 - 1), rho 8 adds 255.
    #[test]
    fn slow_start_increment_is_two_to_the_rho_minus_one() {
        for (srtt, acks, grew) in [(25, 10, 10), (50, 10, 30), (60, 10, 41), (200, 1, 255)] {
            let mut t = tp(10, 100_000, srtt);
            let mut h = hybla(&mut t);
            for _ in 0..acks {
                h.cong_avoid(&mut t, 1);
            }
            assert_eq!(t.snd_cwnd - 10, grew, "srtt {srtt} ms");
        }
    }

    /// Congestion avoidance adds rho^2 packets per RTT: at 50 ms (rho 2) a window of 100
    /// ACKs at cwnd 100 adds 100 * 512/100 / 128 = 3.9, i.e. 3 packets and 116/128 carried;
    /// at 25 ms or less it is about Reno's one.
    #[test]
    fn congestion_avoidance_adds_rho_squared_per_rtt() {
        let mut t = tp(100, 50, 50);
        let mut h = hybla(&mut t);
        for _ in 0..100 {
            h.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 103);
        let mut t = tp(100, 50, 200);
        let mut h = hybla(&mut t);
        for _ in 0..100 {
            h.cong_avoid(&mut t, 1);
        }
        // rho 8: +64/cwnd per ACK; the window grows much within the round, so the exact
        // result is the solution of dw/dn = 64/w: sqrt(100^2 + 2*64*100) = 151.
        assert!((149..=151).contains(&t.snd_cwnd), "rho 8: got {}", t.snd_cwnd);
        // rho 1: 128/cwnd = 1.28/128 per ACK, truncated to 1/128 by Linux's integer
        // division, so 128 ACKs (not Reno's 100) add the packet.
        let mut t = tp(100, 50, 20);
        let mut h = hybla(&mut t);
        for _ in 0..127 {
            h.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 100);
        h.cong_avoid(&mut t, 1);
        assert_eq!(t.snd_cwnd, 101);
    }

    /// Linux starts cwnd at rho when the RTT is known; with no RTT yet we keep the
    /// sender's initial window (documented departure).
    #[test]
    fn initial_window_is_rho_once_the_rtt_is_known() {
        let mut t = tp(10, 1000, 200);
        Hybla::default().init(&mut t);
        assert_eq!(t.snd_cwnd, 8);
        let mut t = TcpState::new(1448, 10);
        let mut h = Hybla::default();
        h.init(&mut t);
        assert_eq!(t.snd_cwnd, 10);
        // The first srtt then sets rho.
        t.srtt_us = 100_000 << 3;
        t.snd_ssthresh = 5;
        h.cong_avoid(&mut t, 1);
        assert_eq!(h.st.rho, 4);
    }
}
