//! The client's side of the three-way handshake, as Linux 6.x runs it: `connect()` sends
//! a SYN (net/ipv4/tcp_output.c `tcp_connect`) with the initial timeout
//! `TCP_TIMEOUT_INIT` (1 s, RFC 6298); the timer retransmits it (tcp_timer.c
//! `tcp_retransmit_timer`), keeping the timeout for the first `tcp_syn_linear_timeouts`
//! timeouts and doubling it after, and `connect()` fails after `tcp_syn_retries` plus
//! those linear retransmissions (`tcp_write_timeout`). The SYN-ACK (tcp_input.c
//! `tcp_rcv_synsent_state_process` → `tcp_ack` → `tcp_ack_update_rtt`) gives the first
//! RTT sample, and `tcp_init_transfer` sets the initial window.
//!
//! The receiver side needs no state here: it answers each SYN with a SYN-ACK at once.

use cclab_units::{Duration, Time};

/// Linux `tcp_syn_retries` (default 6).
const SYN_RETRIES: u32 = 6;
/// Linux `tcp_syn_linear_timeouts` (default 4, since 6.5): SYN timeouts that do not
/// double the timeout.
const SYN_LINEAR_TIMEOUTS: u32 = 4;

/// A connection in SYN-SENT.
#[derive(Clone, Debug)]
pub(super) struct SynSent {
    /// When the first SYN left (Linux `retrans_stamp`).
    first_sent: Time,
    /// SYN retransmissions so far (Linux `total_rto` while in SYN-SENT).
    retransmits: u32,
    /// A SYN waits to be sent at the next transmit.
    due: bool,
    /// The SYN's retransmission timeout.
    rto: Duration,
}

/// What the SYN-ACK gives the connection it establishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Established {
    /// The RTT sample in microseconds, at least 1.
    pub(super) rtt_us: u64,
    /// The initial window is 1 segment rather than `initcwnd`.
    pub(super) cwnd_one: bool,
}

impl SynSent {
    /// `connect()` at `now`: the first SYN is due at once.
    pub(super) fn new(now: Time, rto_initial: Duration) -> SynSent {
        SynSent { first_sent: now, retransmits: 0, due: true, rto: rto_initial }
    }

    /// If a SYN is due, marks it sent at `now` and returns when its timer expires.
    pub(super) fn send_due(&mut self, now: Time) -> Option<Time> {
        if !self.due {
            return None;
        }
        self.due = false;
        Some(now + self.rto)
    }

    /// The SYN's timer expired: a retransmission is due (true), or `connect()` gives up
    /// (false). The timeout doubles, up to `rto_max`, once the linear ones are spent.
    pub(super) fn on_timeout(&mut self, rto_max: Duration) -> bool {
        if self.retransmits >= SYN_RETRIES + SYN_LINEAR_TIMEOUTS {
            return false;
        }
        self.retransmits += 1;
        if self.retransmits > SYN_LINEAR_TIMEOUTS {
            self.rto = self.rto.saturating_mul(2).min(rto_max);
        }
        self.due = true;
        true
    }

    /// The SYN-ACK echoing the TSval `tsecr` arrives at `now`. The RTT sample is the
    /// echoed timestamp's age: Karn's rule voids the sequence sample of a retransmitted
    /// SYN and `tcp_ack_update_rtt` falls back to the timestamp, which names the SYN the
    /// server answered (without retransmission the two are equal). `tcp_init_transfer`
    /// starts with a window of 1 after more than one SYN retransmission, unless the
    /// SYN-ACK answers the first SYN (`tcp_try_undo_spurious_syn`).
    pub(super) fn established(&self, now: Time, tsecr: Time) -> Established {
        let rtt_us = (now.0.saturating_sub(tsecr.0) / 1000).max(1);
        let spurious = tsecr == self.first_sent;
        Established { rtt_us, cwnd_one: self.retransmits > 1 && !spurious }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn syn_timeouts_are_linear_four_times_then_double_and_connect_gives_up() {
        let mut s = SynSent::new(Time(0), Duration::from_secs(1));
        let mut now = Time(0);
        let mut gaps = Vec::new();
        while let Some(deadline) = s.send_due(now) {
            gaps.push((deadline.0 - now.0) / (1000 * MS));
            now = deadline;
            if !s.on_timeout(Duration::from_secs(120)) {
                break;
            }
        }
        // Linux 6.x with the default sysctls: 11 SYNs, then ETIMEDOUT 131 s after connect().
        assert_eq!(gaps, [1, 1, 1, 1, 1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(s.retransmits, 10);
        assert_eq!(now, Time(131 * 1000 * MS));
        assert_eq!(s.send_due(now), None, "no SYN after giving up");
    }

    #[test]
    fn the_sample_is_the_echoed_syns_age_and_cwnd_drops_after_two_real_retransmissions() {
        let mut s = SynSent::new(Time(5 * MS), Duration::from_secs(1));
        s.send_due(Time(5 * MS));
        let e = s.established(Time(45 * MS), Time(5 * MS));
        assert_eq!(e, Established { rtt_us: 40_000, cwnd_one: false });
        s.on_timeout(Duration::from_secs(120));
        s.on_timeout(Duration::from_secs(120));
        // The SYN-ACK answers the third SYN (sent at 2005 ms).
        let e = s.established(Time(2045 * MS), Time(2005 * MS));
        assert_eq!(e, Established { rtt_us: 40_000, cwnd_one: true });
        // It answers the first one, late: the retransmissions were spurious.
        let e = s.established(Time(2045 * MS), Time(5 * MS));
        assert!(!e.cwnd_one);
        assert_eq!(e.rtt_us, 2_040_000);
    }
}
