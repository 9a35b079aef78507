//! TCP Tahoe (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988; 4.3BSD-Tahoe):
//! slow start and congestion avoidance as Reno, but every loss, whether seen through three
//! duplicate ACKs or a timeout, sets ssthresh to half the window and cwnd to one segment,
//! followed by slow start. No fast recovery. The seeds' CUBIC-vs-Tahoe study (`002_…`)
//! uses it as the baseline.

use crate::registry::AlgorithmInfo;
use crate::{tcp, CongestionControl, LossRecovery, TcpState};

#[derive(Clone, Debug, Default)]
pub struct Tahoe;

impl Tahoe {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "tahoe",
        summary: "Tahoe: on any loss ssthresh = cwnd/2, cwnd = 1 segment, slow start again",
        source: "Jacobson, SIGCOMM 1988 (4.3BSD-Tahoe)",
        params: &[],
    };
}

impl CongestionControl for Tahoe {
    /// Half the window at the loss, at least two segments (as Reno).
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp::reno_cong_avoid(tp, acked)
    }
    /// The sender drops cwnd to one segment on fast retransmit instead of recovering.
    fn loss_recovery(&self) -> LossRecovery {
        LossRecovery::Tahoe
    }
}
