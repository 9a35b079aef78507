//! Reno as Linux implements it: `tcp_reno_ssthresh`, `tcp_reno_cong_avoid` and
//! `tcp_reno_undo_cwnd` from `net/ipv4/tcp_cong.c`, with Linux's SACK-based recovery
//! in the sender (RFC 5681 congestion control, RFC 6675 loss detection, RFC 6937 PRR).

use crate::registry::AlgorithmInfo;
use crate::{tcp, CongestionControl, TcpState};

/// Linux's built-in `reno`.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl Reno {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "reno",
        summary:
            "Reno as Linux runs it: slow start, +1 packet per RTT, halve on loss, SACK recovery",
        source: "Linux net/ipv4/tcp_cong.c (tcp_reno_*); RFC 5681",
        params: &[],
    };
}

impl CongestionControl for Reno {
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp::reno_cong_avoid(tp, acked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked example: from cwnd 10 with ssthresh 20, ten rounds of full-window ACKs take
    /// slow start to 20 and then add one packet per round.
    #[test]
    fn slow_start_then_one_packet_per_round() {
        let mut tp = TcpState::new(1448, 10);
        tp.snd_ssthresh = 20;
        let mut reno = Reno;
        let mut per_round = vec![];
        for _ in 0..5 {
            let w = tp.snd_cwnd;
            for _ in 0..w {
                reno.cong_avoid(&mut tp, 1);
            }
            per_round.push(tp.snd_cwnd);
        }
        assert_eq!(per_round, vec![20, 21, 22, 23, 24]);
    }

    #[test]
    fn halves_on_loss_and_undo_restores() {
        let mut tp = TcpState::new(1448, 40);
        let mut reno = Reno;
        tp.prior_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = reno.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        assert_eq!(tp.snd_cwnd, 20);
        assert_eq!(reno.undo_cwnd(&mut tp), 40);
    }
}
