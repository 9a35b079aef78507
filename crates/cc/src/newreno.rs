//! NewReno: Reno's window arithmetic with NewReno loss recovery (RFC 6582): the sender
//! ignores SACK, stays in fast recovery until everything outstanding at the loss is
//! acknowledged, and retransmits the next hole on each partial ACK. This is what Linux
//! does for a peer that does not negotiate SACK; the window rules are `tcp_reno_*`.

use crate::registry::AlgorithmInfo;
use crate::{tcp, CongestionControl, LossRecovery, TcpState};

#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl NewReno {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "newreno",
        summary: "Reno window rules with NewReno partial-ACK recovery and no SACK",
        source: "RFC 6582; Linux tcp_reno_* with SACK off",
        params: &[],
    };
}

impl CongestionControl for NewReno {
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp::reno_cong_avoid(tp, acked)
    }
    fn loss_recovery(&self) -> LossRecovery {
        LossRecovery::NewReno
    }
}
