//! Scalable TCP (T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM CCR 33(2), 2003), as Linux runs it in `net/ipv4/tcp_scalable.c`.
//!
//! Multiplicative increase, multiplicative decrease: in congestion avoidance cwnd grows by
//! 0.01 packet per ACKed packet (one packet per `ai_cnt` = 100 ACKed once cwnd exceeds 100;
//! below that, Reno's one per cwnd), and a loss takes cwnd to `cwnd - cwnd >> 3` = 0.875
//! cwnd. Kelly's constants are a = 0.01 and b = 0.125; Linux encodes them as the integer
//! count 100 and the shift 3, and so do we. Slow start, undo and recovery are Reno's.

use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::{tcp, CongestionControl, TcpState};

/// Tunables. Linux has them as compile-time constants (`TCP_SCALABLE_AI_CNT`,
/// `TCP_SCALABLE_MD_SCALE`); here they may be changed, defaults are Linux's.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Packets ACKed per one-packet increase once cwnd is larger (Linux 100: a = 1/100).
    pub ai_cnt: u32,
    /// The decrease is `cwnd >> md_shift` (Linux 3: b = 1/8).
    pub md_shift: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { ai_cnt: 100, md_shift: 3 }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "ai_cnt",
        100,
        1,
        1_000_000,
        "packets",
        "ACKed packets per one-packet increase (a = 1/ai_cnt) once cwnd > ai_cnt",
    ),
    ParamSpec::int("md_shift", 3, 1, 16, "", "loss decrease is cwnd >> md_shift (b = 2^-md_shift)"),
];

/// Scalable TCP. It keeps no per-flow state beyond `TcpState`.
#[derive(Clone, Debug, Default)]
pub struct Scalable {
    cfg: Config,
}

impl Scalable {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "scalable",
        summary: "Scalable TCP: +0.01 packet per ACK, x0.875 on loss (MIMD)",
        source: "Kelly, ACM CCR 2003; Linux net/ipv4/tcp_scalable.c",
        params: PARAMS,
    };

    pub fn new(cfg: Config) -> Scalable {
        Scalable { cfg }
    }
}

impl CongestionControl for Scalable {
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        (tp.snd_cwnd - (tp.snd_cwnd >> self.cfg.md_shift)).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        let Some(acked) = tcp::slow_start_first(tp, acked) else {
            return;
        };
        tcp::cong_avoid_ai(tp, tp.snd_cwnd.min(self.cfg.ai_cnt), acked);
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn param(&self, name: &str) -> Option<f64> {
        match name {
            "ai_cnt" => Some(self.cfg.ai_cnt as f64),
            "md_shift" => Some(self.cfg.md_shift as f64),
            _ => None,
        }
    }

    fn apply_param(&mut self, name: &str, value: f64) {
        match name {
            "ai_cnt" => self.cfg.ai_cnt = value as u32,
            "md_shift" => self.cfg.md_shift = value as u32,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = ssthresh;
        t
    }

    /// Kelly's a = 0.01: at cwnd 1000, 100 ACKs add exactly one packet, 1000 ACKs add ten
    /// (a 1% increase per RTT).
    #[test]
    fn grows_one_hundredth_of_a_packet_per_ack_at_large_windows() {
        let mut s = Scalable::default();
        let mut t = tp(1000, 500);
        for _ in 0..99 {
            s.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 1000);
        s.cong_avoid(&mut t, 1);
        assert_eq!(t.snd_cwnd, 1001);
        for _ in 0..900 {
            s.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 1010);
    }

    /// Below ai_cnt the window grows as Reno's: one packet per cwnd ACKed.
    #[test]
    fn small_windows_grow_like_reno() {
        let mut s = Scalable::default();
        let mut t = tp(40, 20);
        for _ in 0..40 {
            s.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 41);
    }

    /// Kelly's b = 0.125: ssthresh = 0.875 cwnd (1000 -> 875, 8 -> 7), never below 2.
    #[test]
    fn loss_takes_seven_eighths() {
        let mut s = Scalable::default();
        assert_eq!(s.ssthresh(&tp(1000, 1)), 875);
        assert_eq!(s.ssthresh(&tp(8, 1)), 7);
        assert_eq!(s.ssthresh(&tp(2, 1)), 2);
        let mut a = crate::Algorithm::new("scalable").unwrap();
        a.set_param("md_shift", 1.0).unwrap();
        assert_eq!(a.ssthresh(&tp(1000, 1)), 500);
        assert!(a.set_param("ai_cnt", 0.0).is_err());
    }
}
