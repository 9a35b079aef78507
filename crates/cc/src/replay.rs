//! Hook replay: drive an algorithm through a scripted event sequence over a [`TcpState`],
//! calling the hooks in the order Linux's `tcp_input.c` does, and record `(cwnd,
//! ssthresh)` after every event. The kernel helper replays the same sequences against the
//! eBPF C twin of each algorithm; the two traces must be equal.
//!
//! The sender modelled here is deliberately minimal and fully determined by the events:
//! it always has a full window in flight (after every ACK, `packets_in_flight = cwnd`), a
//! loss reduces cwnd to ssthresh at once (the end result of PRR), and the first ACK after
//! a loss or timeout ends recovery.
//!
//! Event format (one entry of the returned trace per event):
//! - `Advance { us }`: the clock moves forward.
//! - `Ack { acked, rtt_us }`: one ACK for `acked` packets with an optional RTT sample:
//!   `delivered += acked`, srtt/min-RTT updated as Linux does (srtt += rtt - srtt/8, kept
//!   eight times larger), then [`CaState::Open`] if recovering (`set_state`), then
//!   `pkts_acked` (in-flight before the ACK), `in_ack_event`, `cong_avoid`.
//! - `AckRound { rtt_us, duration_us }`: shorthand for one round: as many `Ack { 1,
//!   Some(rtt_us) }` as cwnd was at its start, evenly spaced over `duration_us` (the clock
//!   advances `duration_us / n` before each, the remainder before the last).
//! - `Loss`: a loss seen through duplicate ACKs: `prior_cwnd = cwnd`, `ssthresh =
//!   algo.ssthresh()`, `set_state(Recovery)`, `cwnd = ssthresh`.
//! - `Timeout`: an RTO: `prior_cwnd = cwnd`, `ssthresh = algo.ssthresh()`,
//!   `cwnd_event(Loss)`, `cwnd = 1`, `set_state(Loss)`.
//! - `Undo`: the last reduction was spurious: `cwnd = algo.undo_cwnd()`, ssthresh back
//!   to its value before the reduction, `set_state(Open)`.
//! - `Idle { us }`: the application stops sending: in flight drains to 0, the clock
//!   advances, then `cwnd_event(TxStart)` (no RFC 2861 cwnd decay: that is the sender's).
//! - `Set { name, value }`: `apply_param(name, value)` on the running flow.

use crate::{AckFlags, AckSample, CaEvent, CaState, CongestionControl, TcpState};

/// One scripted event; see the module documentation for exact semantics.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Advance { us: u64 },
    Ack { acked: u32, rtt_us: Option<u32> },
    AckRound { rtt_us: u32, duration_us: u64 },
    Loss,
    Timeout,
    Undo,
    Idle { us: u64 },
    Set { name: &'static str, value: f64 },
}

/// Replays `events` on a fresh connection (MSS 1448, initial cwnd 10, hz 1000).
pub fn replay(algo: &mut dyn CongestionControl, events: &[Event]) -> Vec<(u32, u32)> {
    let mut tp = TcpState::new(1448, 10);
    replay_with(algo, &mut tp, events)
}

/// Replays `events` starting from `tp` (calls `init` first); `tp` is left as it ends.
pub fn replay_with(algo: &mut dyn CongestionControl, tp: &mut TcpState, events: &[Event]) -> Vec<(u32, u32)> {
    algo.init(tp);
    tp.packets_in_flight = tp.snd_cwnd;
    replay_with_noinit(algo, tp, events)
}

/// Continues a replay on an algorithm and state already initialised.
pub fn replay_with_noinit(algo: &mut dyn CongestionControl, tp: &mut TcpState, events: &[Event]) -> Vec<(u32, u32)> {
    let mut prior_ssthresh = tp.snd_ssthresh;
    let mut trace = Vec::with_capacity(events.len());
    for ev in events {
        match *ev {
            Event::Advance { us } => tp.now_us += us,
            Event::Ack { acked, rtt_us } => ack(algo, tp, acked, rtt_us),
            Event::AckRound { rtt_us, duration_us } => {
                let n = tp.snd_cwnd.max(1) as u64;
                for i in 0..n {
                    tp.now_us += duration_us / n + if i == n - 1 { duration_us % n } else { 0 };
                    ack(algo, tp, 1, Some(rtt_us));
                }
            }
            Event::Loss => {
                prior_ssthresh = tp.snd_ssthresh;
                tp.prior_cwnd = tp.snd_cwnd;
                tp.snd_ssthresh = algo.ssthresh(tp);
                algo.set_state(tp, CaState::Recovery);
                tp.ca_state = CaState::Recovery;
                tp.snd_cwnd = tp.snd_ssthresh;
                tp.snd_cwnd_cnt = 0;
            }
            Event::Timeout => {
                prior_ssthresh = tp.snd_ssthresh;
                tp.prior_cwnd = tp.snd_cwnd;
                tp.snd_ssthresh = algo.ssthresh(tp);
                algo.cwnd_event(tp, CaEvent::Loss);
                tp.snd_cwnd = 1;
                tp.snd_cwnd_cnt = 0;
                algo.set_state(tp, CaState::Loss);
                tp.ca_state = CaState::Loss;
                tp.packets_in_flight = 1;
            }
            Event::Undo => {
                tp.snd_cwnd = algo.undo_cwnd(tp);
                tp.snd_ssthresh = tp.snd_ssthresh.max(prior_ssthresh);
                if tp.ca_state != CaState::Open {
                    algo.set_state(tp, CaState::Open);
                    tp.ca_state = CaState::Open;
                }
                tp.packets_in_flight = tp.snd_cwnd;
            }
            Event::Idle { us } => {
                tp.packets_in_flight = 0;
                tp.now_us += us;
                algo.cwnd_event(tp, CaEvent::TxStart);
                tp.packets_in_flight = tp.snd_cwnd;
            }
            Event::Set { name, value } => algo.apply_param(name, value),
        }
        trace.push((tp.snd_cwnd, tp.snd_ssthresh));
    }
    trace
}

fn ack(algo: &mut dyn CongestionControl, tp: &mut TcpState, acked: u32, rtt_us: Option<u32>) {
    tp.delivered = tp.delivered.wrapping_add(acked);
    if let Some(rtt) = rtt_us {
        // tcp_rtt_estimator(): srtt is kept << 3; first sample sets it.
        tp.srtt_us = if tp.srtt_us == 0 { rtt << 3 } else { tp.srtt_us - (tp.srtt_us >> 3) + rtt };
        tp.min_rtt_us = tp.min_rtt_us.min(rtt);
    }
    if tp.ca_state != CaState::Open {
        algo.set_state(tp, CaState::Open);
        tp.ca_state = CaState::Open;
    }
    let sample = AckSample { pkts_acked: acked, rtt_us, in_flight: tp.packets_in_flight };
    algo.pkts_acked(tp, &sample);
    tp.packets_in_flight = tp.packets_in_flight.saturating_sub(acked);
    algo.in_ack_event(tp, AckFlags { acked_bytes: acked.saturating_mul(tp.mss_cache), ..AckFlags::default() });
    algo.cong_avoid(tp, acked);
    tp.packets_in_flight = tp.snd_cwnd;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reno::Reno;

    #[test]
    fn reno_trace_is_slow_start_then_halving() {
        let mut reno = Reno;
        let events = [
            Event::AckRound { rtt_us: 10_000, duration_us: 10_000 },
            Event::AckRound { rtt_us: 10_000, duration_us: 10_000 },
            Event::Loss,
            Event::Ack { acked: 1, rtt_us: Some(10_000) },
            Event::Timeout,
            Event::Undo,
        ];
        let trace = replay(&mut reno, &events);
        assert_eq!(trace[0].0, 20);
        assert_eq!(trace[1].0, 40);
        assert_eq!(trace[2], (20, 20));
        assert_eq!(trace[3].0, 20); // one ACK in CA: cnt 1 of 20
        assert_eq!(trace[4], (1, 10));
        assert_eq!(trace[5], (20, 20));
    }

    #[test]
    fn same_events_same_trace() {
        let events = [Event::AckRound { rtt_us: 30_000, duration_us: 30_000 }, Event::Loss, Event::Advance { us: 5_000 }];
        assert_eq!(replay(&mut Reno, &events), replay(&mut Reno, &events));
    }
}
