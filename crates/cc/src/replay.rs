//! Hook replay: drive an algorithm through a scripted event sequence over a [`TcpState`],
//! calling the hooks in the order Linux's `tcp_input.c` does, and record `(cwnd,
//! ssthresh)` after every event. The kernel helper replays the same sequences against the
//! eBPF C twin of each algorithm; the two traces must be equal.
//!
//! The sender modelled here is deliberately minimal and fully determined by the events:
//! it always has a full window in flight (after every ACK, `packets_in_flight = cwnd`, and
//! `snd_nxt` reaches `snd_una + packets_in_flight`, never moving back, so a timeout leaves
//! it where it was as Linux does), a loss reduces cwnd to ssthresh at once (the end result
//! of PRR), and the first ACK after a loss or timeout ends recovery. ACKs are cumulative.
//!
//! Event format (one entry of the returned trace per event):
//! - `Advance { us }`: the clock moves forward.
//! - `Ack { acked, rtt_us }`: one ACK for `acked` packets with an optional RTT sample:
//!   `delivered += acked` and `snd_una += acked`, srtt/min-RTT updated as Linux does (srtt += rtt - srtt/8, kept
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

/// cwnd clamp of [`replay`]'s connection, packets: the scripted RTT does not rise with
/// cwnd, so an algorithm that keeps growing (CUBIC-FIT adds a virtual flow every 500 ms
/// without queueing delay) would otherwise double its rounds without end.
pub const REPLAY_CWND_CLAMP: u32 = 20_000;

/// Replays `events` on a fresh connection (MSS 1448, initial cwnd 10, hz 1000, cwnd
/// clamp [`REPLAY_CWND_CLAMP`]).
pub fn replay(algo: &mut dyn CongestionControl, events: &[Event]) -> Vec<(u32, u32)> {
    let mut tp = TcpState::new(1448, 10);
    tp.snd_cwnd_clamp = REPLAY_CWND_CLAMP;
    replay_with(algo, &mut tp, events)
}

/// Replays `events` starting from `tp` (calls `init` first); `tp` is left as it ends.
pub fn replay_with(
    algo: &mut dyn CongestionControl,
    tp: &mut TcpState,
    events: &[Event],
) -> Vec<(u32, u32)> {
    algo.init(tp);
    tp.packets_in_flight = tp.snd_cwnd;
    fill_window(tp);
    replay_with_noinit(algo, tp, events)
}

/// Continues a replay on an algorithm and state already initialised.
pub fn replay_with_noinit(
    algo: &mut dyn CongestionControl,
    tp: &mut TcpState,
    events: &[Event],
) -> Vec<(u32, u32)> {
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
                fill_window(tp);
            }
            Event::Idle { us } => {
                tp.packets_in_flight = 0;
                tp.now_us += us;
                algo.cwnd_event(tp, CaEvent::TxStart);
                tp.packets_in_flight = tp.snd_cwnd;
                fill_window(tp);
            }
            Event::Set { name, value } => algo.apply_param(name, value),
        }
        trace.push((tp.snd_cwnd, tp.snd_ssthresh));
    }
    trace
}

/// The sender sends what the window allows: `snd_nxt` up to `snd_una + packets_in_flight`.
fn fill_window(tp: &mut TcpState) {
    let top = tp.snd_una.wrapping_add(tp.packets_in_flight);
    if (top.wrapping_sub(tp.snd_nxt) as i32) > 0 {
        tp.snd_nxt = top;
    }
}

fn ack(algo: &mut dyn CongestionControl, tp: &mut TcpState, acked: u32, rtt_us: Option<u32>) {
    tp.delivered = tp.delivered.wrapping_add(acked);
    tp.snd_una = tp.snd_una.wrapping_add(acked);
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
    algo.in_ack_event(
        tp,
        AckFlags { acked_bytes: acked.saturating_mul(tp.mss_cache), ..AckFlags::default() },
    );
    algo.cong_avoid(tp, acked);
    tp.packets_in_flight = tp.snd_cwnd;
    fill_window(tp);
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
        let events = [
            Event::AckRound { rtt_us: 30_000, duration_us: 30_000 },
            Event::Loss,
            Event::Advance { us: 5_000 },
        ];
        assert_eq!(replay(&mut Reno, &events), replay(&mut Reno, &events));
    }
}

/// Named event sequences shared with the kernel's differential test: each exercises a
/// part of CUBIC (slow start and HyStart, the cubic epoch, fast convergence, the
/// Reno-friendly region at a short RTT, timeouts, undo, idle restart, a live retune).
pub fn standard_sequences() -> Vec<(&'static str, Vec<Event>)> {
    let rounds =
        |n: usize, rtt_us: u32| vec![Event::AckRound { rtt_us, duration_us: rtt_us as u64 }; n];
    let mut out = vec![];

    // Slow start with a rising RTT (HyStart delay), then a cubic epoch, two losses.
    let mut ev = rounds(4, 40_000);
    ev.extend(
        (0..4).map(|i| Event::AckRound { rtt_us: 40_000 + 8_000 * (i + 1), duration_us: 40_000 }),
    );
    ev.extend(rounds(30, 48_000));
    ev.push(Event::Loss);
    ev.extend(rounds(40, 48_000));
    ev.push(Event::Loss);
    ev.extend(rounds(60, 48_000));
    out.push(("hystart_then_epochs", ev));

    // A long RTT: the cubic curve, fast convergence over three losses.
    let mut ev = rounds(7, 100_000);
    for _ in 0..3 {
        ev.push(Event::Loss);
        ev.extend(rounds(25, 100_000));
    }
    out.push(("fast_convergence", ev));

    // A 2 ms RTT: the Reno-friendly estimate sets the pace.
    let mut ev = rounds(5, 2_000);
    ev.push(Event::Loss);
    ev.extend(rounds(300, 2_000));
    out.push(("short_rtt_reno_region", ev));

    // Timeout, slow start again, undo of a spurious loss.
    let mut ev = rounds(6, 30_000);
    ev.push(Event::Loss);
    ev.extend(rounds(10, 30_000));
    ev.push(Event::Timeout);
    ev.push(Event::Advance { us: 200_000 });
    ev.extend(rounds(10, 30_000));
    ev.push(Event::Loss);
    ev.push(Event::Undo);
    ev.extend(rounds(10, 30_000));
    out.push(("timeout_and_undo", ev));

    // Idle in the middle of an epoch, then a stretch-ACK round.
    let mut ev = rounds(6, 50_000);
    ev.push(Event::Loss);
    ev.extend(rounds(10, 50_000));
    ev.push(Event::Idle { us: 3_000_000 });
    ev.extend(rounds(10, 50_000));
    ev.push(Event::Ack { acked: 8, rtt_us: Some(50_000) });
    ev.push(Event::Ack { acked: 3, rtt_us: None });
    out.push(("idle_restart", ev));

    out
}

#[cfg(test)]
mod standard_tests {
    use super::*;
    use crate::{Algorithm, ALGORITHMS};

    /// Every algorithm replays every standard sequence deterministically, keeping cwnd
    /// and ssthresh at least 1 and 2 after any reduction.
    #[test]
    fn every_algorithm_replays_the_standard_sequences() {
        for info in ALGORITHMS {
            for (name, events) in standard_sequences() {
                let mut a = Algorithm::new(info.name).unwrap();
                let t1 = replay(&mut a, &events);
                let mut b = Algorithm::new(info.name).unwrap();
                assert_eq!(t1, replay(&mut b, &events), "{} {name} not deterministic", info.name);
                for (i, &(cwnd, ssthresh)) in t1.iter().enumerate() {
                    assert!(
                        cwnd >= 1 && ssthresh >= 2,
                        "{} {name} step {i}: ({cwnd}, {ssthresh})",
                        info.name
                    );
                }
            }
        }
    }
}
