//! Congestion control algorithms, sans-IO, shaped like Linux's `struct tcp_congestion_ops`
//! (include/net/tcp.h).
//!
//! An algorithm never reads a clock, a socket or a global. Every hook receives a
//! [`TcpState`]: the fields of Linux's `struct tcp_sock` that congestion control reads and
//! writes (cwnd, ssthresh, the cwnd counter, RTT estimates, the current time), filled in
//! by whoever drives the algorithm: the simulator's TCP sender, the user-space UDP
//! transport, or a test replaying a recorded event sequence. Hooks are called at the same
//! points, in the same order, as Linux's `tcp_input.c` calls them, so a Rust algorithm and
//! its eBPF C twin can be checked against each other on one event sequence.
//!
//! Layout: [`tcp`] holds the helpers every algorithm shares (Linux's `tcp_cong.c`:
//! `tcp_slow_start`, `tcp_cong_avoid_ai`, `tcp_reno_*`); [`params`] the tunable-parameter
//! descriptions; [`registry`] the enum over all built-in algorithms used on the hot path;
//! [`tcp_limits`] the allowed values of the TCP-level settings (`rto_min`, `initcwnd`,
//! `mss`) for every crate; one file per algorithm beside them. [`cubic_config`] describes,
//! once, the tunables that `cubic`, `tuner`, `cubic-fit` and the kernel crate's eBPF maps
//! share.

pub mod params;
pub mod registry;
pub mod tcp;
pub mod tcp_limits;

pub mod bic;
pub mod compound;
pub mod cubic;
pub mod cubic_2008;
pub mod cubic_config;
pub mod cubic_fit;
pub mod cubic_knobs;
pub mod cubic_rfc9438;
pub mod cubic_root;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod newreno;
pub mod reno;
pub mod replay;
pub mod scalable;
pub mod tahoe;
pub mod tcp_fit;
pub mod tuner;
pub mod vegas;
pub mod veno;
pub mod westwood;

pub use params::{ParamError, ParamKind, ParamSpec};
pub use registry::{Algorithm, AlgorithmInfo, UnknownAlgorithm, ALGORITHMS};

/// Linux's `enum tcp_ca_state`: where the sender is in loss recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Normal operation.
    #[default]
    Open,
    /// Duplicate ACKs or SACKs seen, no loss inferred yet.
    Disorder,
    /// cwnd being reduced after an ECN echo (not modelled yet, kept for the hook's shape).
    Cwr,
    /// Fast recovery after a loss inferred from duplicate ACKs or SACK.
    Recovery,
    /// Recovery after a retransmission timeout.
    Loss,
}

/// Linux's `enum tcp_ca_event`, passed to [`CongestionControl::cwnd_event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a CWR reduction.
    CompleteCwr,
    /// Retransmission timeout fired (Linux sends it from `tcp_enter_loss`).
    Loss,
    /// ECN: a non-CE-marked segment arrived.
    EcnNoCe,
    /// ECN: a CE-marked segment arrived.
    EcnIsCe,
}

/// Linux's `CA_ACK_*` flags for [`CongestionControl::in_ack_event`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFlags {
    /// The ACK took the slow path (Linux's `CA_ACK_SLOWPATH`): it carried SACK blocks,
    /// a window update or was otherwise not a pure in-order cumulative ACK.
    pub slow_path: bool,
    /// The ACK updated the receive window (`CA_ACK_WIN_UPDATE`).
    pub window_update: bool,
    /// The ACK echoed congestion (`CA_ACK_ECE`).
    pub ece: bool,
    /// Bytes newly acknowledged by this ACK (what Westwood+ counts as delivered).
    pub acked_bytes: u32,
}

/// Linux's `struct ack_sample`, passed to [`CongestionControl::pkts_acked`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Packets newly acknowledged (cumulatively or by SACK).
    pub pkts_acked: u32,
    /// RTT measured on this ACK in microseconds, or `None` when the ACK gave no valid
    /// sample (only retransmitted data acknowledged: Karn's rule).
    pub rtt_us: Option<u32>,
    /// Packets in flight before this ACK was processed.
    pub in_flight: u32,
}

/// Linux's `struct rate_sample` (the fields rate-based algorithms read), passed to
/// [`CongestionControl::cong_control`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Packets delivered over the sampling interval.
    pub delivered: u32,
    /// Length of the sampling interval in microseconds (0 if no valid sample).
    pub interval_us: u64,
    /// RTT of the most recently delivered packet, if any.
    pub rtt_us: Option<u32>,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly acknowledged or SACKed on this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample was taken while the application, not cwnd, limited sending.
    pub is_app_limited: bool,
}

/// How the sender recovers from a loss inferred from duplicate ACKs. Linux has only the
/// first two (SACK, or NewReno when the peer does not SACK); Tahoe is here because the
/// seeds compare against it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossRecovery {
    /// Linux's default: SACK scoreboard, fast retransmit, fast recovery with PRR (RFC 6937).
    #[default]
    Sack,
    /// Fast recovery with NewReno partial-ACK handling (RFC 6582); SACK information ignored.
    NewReno,
    /// No fast recovery: on three duplicate ACKs, retransmit, cwnd to one segment and slow
    /// start (Jacobson 1988, 4.3BSD-Tahoe).
    Tahoe,
}

/// The fields of Linux's `struct tcp_sock` that congestion control reads and writes.
///
/// The driver (simulator sender, UDP transport, replay test) keeps it up to date before
/// each hook: `now_us`, RTT estimates and in-flight counts are inputs; `snd_cwnd`,
/// `snd_ssthresh` and `snd_cwnd_cnt` are read back after the hook. Names and units follow
/// Linux so that ports read alike; note `srtt_us` is *eight times* the smoothed RTT, as in
/// Linux (use [`TcpState::srtt_us`] for the plain value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpState {
    /// Current time in microseconds (Linux `tp->tcp_mstamp`).
    pub now_us: u64,
    /// Timer frequency used for `jiffies` (Linux `CONFIG_HZ`; 1000 by default here).
    pub hz: u32,
    /// Where time zero falls within a tick, in microseconds (under one tick, `1e6 / hz`):
    /// the tick counter reads `(now_us + tick_phase_us) * hz / 1e6`. Linux's `jiffies`
    /// counts from boot, so a connection starts at an arbitrary point of a tick; zero
    /// puts a tick at time zero.
    pub tick_phase_us: u32,
    /// Congestion window in packets (`snd_cwnd`).
    pub snd_cwnd: u32,
    /// Slow-start threshold in packets (`snd_ssthresh`).
    pub snd_ssthresh: u32,
    /// Linear-increase counter in ACKed packets (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound on cwnd in packets (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction, for undo (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// Maximum segment size in bytes (`mss_cache`).
    pub mss_cache: u32,
    /// Smoothed RTT in microseconds, left-shifted by 3 as Linux stores it (0: no sample yet).
    pub srtt_us: u32,
    /// Windowed minimum RTT in microseconds (Linux `tcp_min_rtt()`; `u32::MAX` if none).
    pub min_rtt_us: u32,
    /// Packets in flight (`tcp_packets_in_flight()`).
    pub packets_in_flight: u32,
    /// Largest in-flight count in the last cwnd-limited window (`max_packets_out`).
    pub max_packets_out: u32,
    /// The sender was limited by cwnd rather than by the application (`is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Total packets delivered so far (`tp->delivered`).
    pub delivered: u32,
    /// Oldest unacknowledged segment (`tp->snd_una`), counted in segments where Linux
    /// counts bytes; SACKed segments above a hole do not move it.
    pub snd_una: u32,
    /// Next segment to send (`tp->snd_nxt`), in segments; it does not move back when a
    /// timeout marks everything lost.
    pub snd_nxt: u32,
    /// Loss recovery state (`icsk_ca_state`).
    pub ca_state: CaState,
}

impl TcpState {
    /// A fresh connection: cwnd = `init_cwnd`, ssthresh "infinite" as in Linux
    /// (`TCP_INFINITE_SSTHRESH`), no RTT sample yet.
    pub fn new(mss: u32, init_cwnd: u32) -> TcpState {
        TcpState {
            now_us: 0,
            hz: 1000,
            tick_phase_us: 0,
            snd_cwnd: init_cwnd.max(1),
            snd_ssthresh: tcp::INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            mss_cache: mss,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            packets_in_flight: 0,
            max_packets_out: 0,
            is_cwnd_limited: true,
            delivered: 0,
            snd_una: 0,
            snd_nxt: 0,
            ca_state: CaState::Open,
        }
    }

    /// Linux's `tcp_jiffies32`: the current time in ticks of `hz`, wrapping at 2^32.
    /// CUBIC asks for it on every ACK, so the product is taken in 64 bits (a division
    /// by a constant, compiled to a multiplication) and in 128 bits only once it no
    /// longer fits: after 71 minutes at `hz` 2^32, after 584 years at 1000.
    pub fn jiffies(&self) -> u32 {
        self.jiffies_at(self.now_us)
    }

    /// `tcp_jiffies32` at `now_us` rather than at [`now_us`](Self::now_us).
    pub fn jiffies_at(&self, now_us: u64) -> u32 {
        let now_us = now_us.saturating_add(self.tick_phase_us as u64);
        match now_us.checked_mul(self.hz as u64) {
            Some(ticks_us) => (ticks_us / 1_000_000) as u32,
            None => (now_us as u128 * self.hz as u128 / 1_000_000) as u32,
        }
    }

    /// Linux's `usecs_to_jiffies` (rounds up).
    pub fn usecs_to_jiffies(&self, us: u32) -> u32 {
        ((us as u64 * self.hz as u64).div_ceil(1_000_000)) as u32
    }

    /// The smoothed RTT in microseconds (Linux's `srtt_us >> 3`).
    pub fn srtt_us(&self) -> u32 {
        self.srtt_us >> 3
    }
}

/// One congestion control algorithm: Linux's `struct tcp_congestion_ops`, hook for hook.
///
/// Hooks are called as `tcp_input.c` calls them:
/// - every ACK that acknowledges data: [`pkts_acked`](Self::pkts_acked) (from
///   `tcp_clean_rtx_queue`), then [`in_ack_event`](Self::in_ack_event), then either
///   [`cong_control`](Self::cong_control) when it returns `true`, or, outside cwnd reduction
///   and when cwnd may be raised, [`cong_avoid`](Self::cong_avoid);
/// - entering fast recovery or RTO recovery: [`ssthresh`](Self::ssthresh) (the sender
///   stores the result in `snd_ssthresh`), then [`set_state`](Self::set_state);
/// - an RTO also sends [`CaEvent::Loss`] through [`cwnd_event`](Self::cwnd_event);
/// - a spurious reduction detected: [`undo_cwnd`](Self::undo_cwnd).
pub trait CongestionControl {
    /// Linux `init`: the connection is established (or the algorithm was just selected).
    fn init(&mut self, _tp: &mut TcpState) {}

    /// Linux `ssthresh`: the slow-start threshold after a loss, in packets.
    fn ssthresh(&mut self, tp: &TcpState) -> u32;

    /// Linux `cong_avoid`: grow cwnd on an ACK; `acked` counts packets newly ACKed or SACKed.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32);

    /// Linux `set_state`: the loss-recovery state is about to change to `new_state`.
    fn set_state(&mut self, _tp: &mut TcpState, _new_state: CaState) {}

    /// Linux `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut TcpState, _event: CaEvent) {}

    /// Linux `in_ack_event`: called for every ACK, before cwnd is updated.
    fn in_ack_event(&mut self, _tp: &mut TcpState, _flags: AckFlags) {}

    /// Linux `pkts_acked`: packets were acknowledged; carries the RTT sample.
    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// Linux `undo_cwnd`: the last reduction was spurious; returns the cwnd to restore.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tcp::reno_undo_cwnd(tp)
    }

    /// Linux `cong_control`: rate-based algorithms set cwnd (and pacing) themselves from a
    /// rate sample. Return `true` if this algorithm did so; the default, `false`, makes the
    /// sender use [`cong_avoid`](Self::cong_avoid) and PRR as Linux does.
    fn cong_control(&mut self, _tp: &mut TcpState, _rs: &RateSample) -> bool {
        false
    }

    /// How the sender recovers from losses seen through duplicate ACKs (not a Linux hook:
    /// Linux always does SACK/NewReno fast recovery; Tahoe needs the third option).
    fn loss_recovery(&self) -> LossRecovery {
        LossRecovery::Sack
    }

    /// The tunable parameters: names, defaults, ranges and units.
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }

    /// The current value of parameter `name` (one of [`params`](Self::params)).
    fn param(&self, _name: &str) -> Option<f64> {
        None
    }

    /// Sets parameter `name` to `value`, already checked against its [`ParamSpec`] by
    /// [`Algorithm::set_param`]. Recompute any constant derived from it here: a running
    /// flow must behave as if it had started with the new value (TCPTuner and Linux leave
    /// CUBIC's `beta_scale` stale; we do not).
    fn apply_param(&mut self, _name: &str, _value: f64) {}

    /// Reports internal variables (CUBIC's W_max and K, CUBIC-FIT's N, ...) for the
    /// `cc_*` columns of time series. Called at sampling times only, never per packet.
    fn inspect(&self, _report: &mut dyn FnMut(&'static str, f64)) {}
}

#[cfg(test)]
mod tests {
    use super::TcpState;

    /// The 64-bit path and the 128-bit one give Linux's ticks alike, on both sides of
    /// the point where the product stops fitting in 64 bits.
    #[test]
    fn jiffies_are_the_exact_tick_count_wrapped_at_2_pow_32() {
        let exact = |now_us: u64, hz: u32| (now_us as u128 * hz as u128 / 1_000_000) as u32;
        let mut tp = TcpState::new(1448, 10);
        for hz in [100, 250, 300, 1000, 1 << 20, u32::MAX] {
            let fits = u64::MAX / hz as u64;
            for now_us in [0, 1, 999, 1_000_000, 123_456_789, fits - 1, fits, fits + 1, u64::MAX] {
                tp.hz = hz;
                tp.now_us = now_us;
                assert_eq!(tp.jiffies(), exact(now_us, hz), "now_us {now_us}, hz {hz}");
            }
        }
        tp.hz = 1000;
        tp.now_us = 4_294_967_296_000; // 2^32 ms: the tick count wraps to zero
        assert_eq!(tp.jiffies(), 0);
    }

    /// A tick phase moves every tick earlier by that much: at HZ 250 (4 ms ticks) with
    /// the phase 2.5 ms, the first tick comes at 1.5 ms and the next at 5.5 ms.
    #[test]
    fn the_tick_phase_moves_the_ticks_earlier() {
        let mut tp = TcpState::new(1448, 10);
        tp.hz = 250;
        tp.tick_phase_us = 2_500;
        let ticks: Vec<u32> =
            [0, 1_499, 1_500, 5_499, 5_500].iter().map(|&us| tp.jiffies_at(us)).collect();
        assert_eq!(ticks, [0, 0, 1, 1, 2]);
        tp.tick_phase_us = 0;
        assert_eq!(tp.jiffies_at(1_500), 0, "without a phase the first tick is at 4 ms");
    }
}
