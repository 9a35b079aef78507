//! TCP Westwood+ (L. A. Grieco, S. Mascolo, "Performance evaluation and comparison of
//! Westwood+, New Reno, and Vegas TCP congestion control", ACM CCR 34(2), 2004; S. Mascolo
//! et al., "TCP Westwood: Bandwidth estimation for enhanced transport over wireless
//! links", MobiCom 2001), as Linux runs it in `net/ipv4/tcp_westwood.c`.
//!
//! Reno's window growth, but after a loss the window is set from an end-to-end estimate
//! of the bandwidth (BWE) instead of being halved blindly: ssthresh = BWE x RTTmin (in
//! packets, at least 2). Westwood+ samples the ACKed bytes once per RTT (at least 50 ms)
//! and smooths the samples with two cascaded 7/8 low-pass filters, which is what makes it
//! robust to ACK compression. Duplicate ACKs count as one segment delivered each, and the
//! cumulative ACK that follows them is credited only with what they did not already count.
//!
//! Hooks as in Linux: the bytes come through `in_ack_event` (Linux reads `snd_una`; here
//! [`AckFlags::acked_bytes`] carries the same difference), the RTT through `pkts_acked`,
//! and the window is set on [`CaEvent::CompleteCwr`] (end of recovery: cwnd = ssthresh =
//! BWE x RTTmin) and [`CaEvent::Loss`] (RTO: ssthresh = BWE x RTTmin). The sender must
//! send `CompleteCwr` when it leaves recovery, as Linux's `tcp_end_cwnd_reduction` does.
//! Times are in jiffies and the estimate in bytes per jiffy, as in Linux. There are no
//! tunables.

use crate::registry::AlgorithmInfo;
use crate::{tcp, AckFlags, AckSample, CaEvent, CongestionControl, TcpState};

/// Shortest bandwidth sampling interval, 50 ms (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20).
const RTT_MIN_MS: u32 = 50;
/// RTT assumed until the first sample, 20 s (Linux `TCP_WESTWOOD_INIT_RTT` = 20 HZ).
const INIT_RTT_SECS: u32 = 20;

/// Per-flow state (Linux `struct westwood`). Times in jiffies, bandwidth in bytes/jiffy.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// First filter stage ("not too smoothed").
    pub bw_ns_est: u32,
    /// Bandwidth estimate, second filter stage.
    pub bw_est: u32,
    /// Start of the current sampling interval.
    pub rtt_win_sx: u32,
    /// Bytes ACKed in the current interval.
    pub bk: u32,
    /// Bytes credited by the last ACK.
    pub cumul_ack: u32,
    /// Bytes already credited through duplicate ACKs and not yet cumulatively ACKed.
    pub accounted: u32,
    /// Last RTT sample.
    pub rtt: u32,
    /// Smallest RTT sample.
    pub rtt_min: u32,
    /// Take the next RTT as the new minimum (set by an RTO).
    pub reset_rtt_min: bool,
    /// `rtt_win_sx` still waits for the first ACK.
    pub first_ack: bool,
}

#[derive(Clone, Debug)]
pub struct Westwood {
    st: State,
    /// The sender's jiffy rate, kept to report the estimate in bit/s.
    hz: u32,
}

impl Default for Westwood {
    fn default() -> Self {
        Westwood {
            st: State {
                bw_ns_est: 0,
                bw_est: 0,
                rtt_win_sx: 0,
                bk: 0,
                cumul_ack: 0,
                accounted: 0,
                rtt: INIT_RTT_SECS * 1000,
                rtt_min: INIT_RTT_SECS * 1000,
                reset_rtt_min: true,
                first_ack: true,
            },
            hz: 1000,
        }
    }
}

/// Linux `westwood_do_filter`: 7/8 old + 1/8 new.
fn filter(old: u32, sample: u32) -> u32 {
    ((7 * old as u64 + sample as u64) >> 3) as u32
}

fn ms_to_jiffies(hz: u32, ms: u32) -> u32 {
    ((ms as u64 * hz as u64).div_ceil(1000)) as u32
}

impl Westwood {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "westwood",
        summary: "Westwood+: Reno growth; after a loss, window = estimated bandwidth x RTTmin",
        source: "Grieco & Mascolo, ACM CCR 2004; Linux net/ipv4/tcp_westwood.c",
        params: &[],
    };

    pub fn state(&self) -> &State {
        &self.st
    }

    /// The window the bandwidth estimate allows, in packets (Linux `tcp_westwood_bw_rttmin`).
    pub fn bw_rttmin(&self, tp: &TcpState) -> u32 {
        let bytes = self.st.bw_est as u64 * self.st.rtt_min as u64;
        ((bytes / tp.mss_cache.max(1) as u64).min(u32::MAX as u64) as u32).max(2)
    }

    /// Closes the sampling interval once it is longer than an RTT (and 50 ms).
    fn update_window(&mut self, tp: &TcpState) {
        let now = tp.jiffies();
        if self.st.first_ack {
            self.st.rtt_win_sx = now;
            self.st.first_ack = false;
        }
        let delta = now.wrapping_sub(self.st.rtt_win_sx);
        if self.st.rtt != 0 && delta > self.st.rtt.max(ms_to_jiffies(tp.hz, RTT_MIN_MS)) {
            let sample = self.st.bk / delta;
            if self.st.bw_ns_est == 0 && self.st.bw_est == 0 {
                // Empty filter: start from the first sample.
                self.st.bw_ns_est = sample;
                self.st.bw_est = sample;
            } else {
                self.st.bw_ns_est = filter(self.st.bw_ns_est, sample);
                self.st.bw_est = filter(self.st.bw_est, self.st.bw_ns_est);
            }
            self.st.bk = 0;
            self.st.rtt_win_sx = now;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.st.reset_rtt_min {
            self.st.rtt_min = self.st.rtt;
            self.st.reset_rtt_min = false;
        } else {
            self.st.rtt_min = self.st.rtt_min.min(self.st.rtt);
        }
    }

    /// Linux `westwood_acked_count`: bytes to credit for a slow-path ACK.
    fn acked_count(&mut self, acked_bytes: u32, mss: u32) -> u32 {
        let st = &mut self.st;
        st.cumul_ack = acked_bytes;
        if st.cumul_ack == 0 {
            // A duplicate ACK: one segment left the network.
            st.accounted += mss;
            st.cumul_ack = mss;
        }
        if st.cumul_ack > mss {
            // Partial or delayed ACK: do not count again what duplicates already did.
            if st.accounted >= st.cumul_ack {
                st.accounted -= st.cumul_ack;
                st.cumul_ack = mss;
            } else {
                st.cumul_ack -= st.accounted;
                st.accounted = 0;
            }
        }
        st.cumul_ack
    }
}

impl CongestionControl for Westwood {
    fn init(&mut self, tp: &mut TcpState) {
        *self = Westwood::default();
        self.hz = tp.hz;
        self.st.rtt = INIT_RTT_SECS * tp.hz;
        self.st.rtt_min = self.st.rtt;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp::reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp::reno_cong_avoid(tp, acked)
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt_us.filter(|&r| r > 0) {
            self.st.rtt = tp.usecs_to_jiffies(rtt);
        }
    }

    fn in_ack_event(&mut self, tp: &mut TcpState, flags: AckFlags) {
        self.hz = tp.hz;
        self.update_window(tp);
        let credit = if flags.slow_path {
            self.acked_count(flags.acked_bytes, tp.mss_cache)
        } else {
            flags.acked_bytes
        };
        self.st.bk = self.st.bk.saturating_add(credit);
        self.update_rtt_min();
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CompleteCwr => {
                tp.snd_ssthresh = self.bw_rttmin(tp);
                tp.snd_cwnd = tp.snd_ssthresh.min(tp.snd_cwnd_clamp);
            }
            CaEvent::Loss => {
                tp.snd_ssthresh = self.bw_rttmin(tp);
                // The RTO may follow a route change: take the next RTT as the minimum.
                self.st.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("bwe_bps", self.st.bw_est as f64 * self.hz as f64 * 8.0);
        // Before any RTT sample rtt_min is Linux's 20 s placeholder: not worth showing.
        if self.st.rtt_min != INIT_RTT_SECS * self.hz {
            report("rtt_min_us", self.st.rtt_min as f64 * 1e6 / self.hz as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// Drives `ms` milliseconds of one fast-path ACK of one segment per millisecond, each
    /// with an RTT of `rtt_ms`: a 1448 B/ms = 11.6 Mbit/s flow.
    fn run(w: &mut Westwood, t: &mut TcpState, ms: u32, rtt_ms: u32) {
        for _ in 0..ms {
            t.now_us += 1000;
            w.pkts_acked(
                t,
                &AckSample { pkts_acked: 1, rtt_us: Some(rtt_ms * 1000), in_flight: 10 },
            );
            w.in_ack_event(t, AckFlags { acked_bytes: MSS, ..AckFlags::default() });
            w.cong_avoid(t, 1);
        }
    }

    /// The bandwidth estimate after a loss: at one 1448-byte segment per ms with a 100 ms
    /// RTT, BWE = 1448 B/jiffy and RTTmin = 100 jiffies, so an RTO sets ssthresh to
    /// 1448 * 100 / 1448 = 100 packets (the BDP) whatever cwnd was, and the end of a
    /// recovery sets cwnd = ssthresh = 100.
    #[test]
    fn bwe_sets_the_window_after_a_loss() {
        let mut t = TcpState::new(MSS, 10);
        t.snd_ssthresh = 400;
        let mut w = Westwood::default();
        w.init(&mut t);
        run(&mut w, &mut t, 2000, 100);
        assert_eq!(w.st.bw_est, MSS);
        assert_eq!(w.st.rtt_min, 100);
        t.snd_cwnd = 300;
        w.cwnd_event(&mut t, CaEvent::Loss);
        assert_eq!(t.snd_ssthresh, 100);
        t.snd_cwnd = 300;
        t.snd_ssthresh = w.ssthresh(&t);
        assert_eq!(t.snd_ssthresh, 150, "fast recovery starts from Reno's half");
        w.cwnd_event(&mut t, CaEvent::CompleteCwr);
        assert_eq!((t.snd_cwnd, t.snd_ssthresh), (100, 100));
    }

    /// The filters: when the rate halves, the estimate follows gradually (two 7/8 stages),
    /// not at once; after the change it lies between the two rates and keeps falling.
    #[test]
    fn estimate_follows_a_rate_change_through_the_filters() {
        let mut t = TcpState::new(MSS, 10);
        let mut w = Westwood::default();
        w.init(&mut t);
        run(&mut w, &mut t, 2000, 100);
        // Now one segment every 2 ms.
        let mut seen = vec![];
        for _ in 0..5 {
            for _ in 0..101 {
                t.now_us += 2000;
                w.pkts_acked(
                    &mut t,
                    &AckSample { pkts_acked: 1, rtt_us: Some(100_000), in_flight: 10 },
                );
                w.in_ack_event(&mut t, AckFlags { acked_bytes: MSS, ..AckFlags::default() });
            }
            seen.push(w.st.bw_est);
        }
        assert!(seen.windows(2).all(|p| p[1] <= p[0]), "{seen:?}");
        assert!(seen[0] < MSS && seen[4] > MSS / 2, "{seen:?}");
    }

    /// Duplicate ACKs count one segment each; the cumulative ACK that ends them is credited
    /// only with the rest (3 segments ACKed after 2 duplicates: 1 more segment).
    #[test]
    fn duplicate_acks_are_not_counted_twice() {
        let mut t = TcpState::new(MSS, 10);
        let mut w = Westwood::default();
        w.init(&mut t);
        let slow = |bytes| AckFlags { slow_path: true, acked_bytes: bytes, ..AckFlags::default() };
        w.in_ack_event(&mut t, slow(0));
        w.in_ack_event(&mut t, slow(0));
        assert_eq!(w.st.bk, 2 * MSS);
        w.in_ack_event(&mut t, slow(3 * MSS));
        assert_eq!(w.st.bk, 3 * MSS);
        assert_eq!(w.st.accounted, 0);
    }

    /// Before any estimate the window floor is two packets.
    #[test]
    fn no_estimate_gives_two_packets() {
        let mut t = TcpState::new(MSS, 10);
        let mut w = Westwood::default();
        w.init(&mut t);
        w.cwnd_event(&mut t, CaEvent::Loss);
        assert_eq!(t.snd_ssthresh, 2);
    }
}
