//! RTT measurement and the retransmission timeout, as Linux computes them
//! (net/ipv4/tcp_input.c `tcp_clean_rtx_queue`, `tcp_ack_update_rtt`,
//! `tcp_rtt_estimator`, `tcp_update_rtt_min`; `__tcp_set_rto`; RFC 6298).
//!
//! Which segments an ACK may measure (Karn's rule, the SACK and timestamp fallbacks) is
//! [`rtt_samples`]; the smoothed RTT, its variation and the RTO are [`RttEstimator`]:
//! srtt and mdev in microseconds, scaled as in Linux, `rto_min` entering through rttvar
//! so that RTO >= srtt + rto_min, exponential backoff up to `rto_max`, the backoff
//! cleared by the next valid sample (RFC 6298 5.7). Min RTT is Linux's: the lowest sample,
//! kept until a lower one comes or it is [`MIN_RTT_WINDOW_SECS`] old.

use super::scoreboard::{EVER_RETRANS, SACKED};
use crate::config::TcpConfig;
use cclab_cc::TcpState;
use cclab_units::{Duration, Time};

/// How long the min-RTT filter keeps its minimum: Linux's `net.ipv4.tcp_min_rtt_wlen`,
/// 300 s by default (`tcp_sk_init`, net/ipv4/tcp_ipv4.c; this machine's kernel has 300),
/// which `tcp_update_rtt_min` hands to `minmax_running_min` in jiffies. Runs shorter
/// than that keep the lowest sample of the whole run. (cclab had 10 s, BBR's window for
/// its own min RTT, `bbr_min_rtt_win_sec`, not TCP's.)
const MIN_RTT_WINDOW_SECS: u32 = 300;

/// Send times, in ns, of the segments one ACK newly delivers, from which its RTT samples
/// come (Linux `tcp_clean_rtx_queue`'s `first_ackt`/`last_ackt`, `tcp_sacktag_state`'s
/// `first_sackt`/`last_sackt`). Karn's rule: only never-retransmitted segments count.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckedTimes {
    /// Oldest and newest cumulatively acknowledged segment not SACKed before.
    first_ackt: Option<u64>,
    last_ackt: Option<u64>,
    /// The cumulative ACK covers a segment that was ever retransmitted, SACKed or not
    /// (`FLAG_RETRANS_DATA_ACKED`): the sequence sample is void, since the segments
    /// above such a hole may have arrived long before this ACK could be sent.
    retrans_acked: bool,
    /// Lowest and highest newly SACKed segment, as (segment, send time).
    first_sackt: Option<(u32, u64)>,
    last_sackt: Option<(u32, u64)>,
}

impl AckedTimes {
    pub(super) fn cumulatively_acked(&mut self, flags: u8, sent: u64) {
        if flags & EVER_RETRANS != 0 {
            self.retrans_acked = true;
        } else if flags & SACKED == 0 {
            self.first_ackt.get_or_insert(sent);
            self.last_ackt = Some(sent);
        }
    }

    pub(super) fn newly_sacked(&mut self, flags: u8, seq: u32, sent: u64) {
        if flags & EVER_RETRANS != 0 {
            return;
        }
        if self.first_sackt.is_none_or(|(s, _)| seq < s) {
            self.first_sackt = Some((seq, sent));
        }
        if self.last_sackt.is_none_or(|(s, _)| seq > s) {
            self.last_sackt = Some((seq, sent));
        }
    }
}

/// One ACK's RTT samples in microseconds (Linux `tcp_ack_update_rtt`'s inputs after its
/// timestamp fallback): `seq_rtt_us` feeds the RFC 6298 estimator, `ca_rtt_us` (the most
/// recently sent segment's) the min-RTT filter, `pkts_acked`, the rate sample and the
/// RTT statistics. Both are present or both absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RttSamples {
    pub(super) seq_rtt_us: Option<u64>,
    pub(super) ca_rtt_us: Option<u64>,
}

/// The RFC 6298 estimator in Linux's form (`tp->srtt_us` lives in [`TcpState`] for the
/// algorithms to read, and is passed in).
///
/// [`TcpState`]: cclab_cc::TcpState
#[derive(Clone, Debug)]
pub(super) struct RttEstimator {
    /// Linux `mdev_us`, `mdev_max_us`, `rttvar_us`: RTT variation, its maximum over the
    /// current window, and the smoothed variation the RTO uses.
    mdev_us: u32,
    mdev_max_us: u32,
    rttvar_us: u32,
    /// `snd_nxt` when the current window of samples began (Linux `rtt_seq`).
    rtt_seq: u32,
    rto: Duration,
    /// When the stored min-RTT sample was taken, in jiffies (`tp->rtt_min.s[0].t`).
    min_rtt_stamp: u32,
}

impl RttEstimator {
    pub(super) fn new(rto_initial: Duration) -> RttEstimator {
        RttEstimator {
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto: rto_initial,
            min_rtt_stamp: 0,
        }
    }

    #[inline]
    pub(super) fn rto(&self) -> Duration {
        self.rto
    }

    /// The timer expired: double the RTO, up to `rto_max`.
    pub(super) fn back_off(&mut self, rto_max: Duration) {
        self.rto = self.rto.saturating_mul(2).min(rto_max);
    }

    /// Linux `tcp_rtt_estimator` + `__tcp_set_rto` for a sample of `m_us`: updates
    /// `srtt_us` (Linux's, eight times the smoothed RTT) and the RTO. `snd_una` and
    /// `snd_nxt` mark the windows over which the variation's maximum is kept.
    pub(super) fn on_sample(
        &mut self,
        srtt_us: &mut u32,
        m_us: u64,
        snd_una: u32,
        snd_nxt: u32,
        cfg: &TcpConfig,
    ) {
        let m = m_us.min(u32::MAX as u64 / 16) as i64;
        let rto_min_us = cfg.rto_min.as_micros().min(u32::MAX as u64 / 4) as u32;
        let mut srtt = *srtt_us as i64;
        if srtt != 0 {
            let mut d = m - (srtt >> 3);
            srtt += d;
            if d < 0 {
                d = -d;
                d -= (self.mdev_us >> 2) as i64;
                if d > 0 {
                    d >>= 3;
                }
            } else {
                d -= (self.mdev_us >> 2) as i64;
            }
            self.mdev_us = (self.mdev_us as i64 + d).max(0) as u32;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = (m << 1) as u32;
            self.rttvar_us = self.mdev_us.max(rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        *srtt_us = srtt.clamp(1, u32::MAX as i64) as u32;
        let rto_us = (*srtt_us >> 3) as u64 + self.rttvar_us as u64;
        self.rto = Duration::from_micros(rto_us).min(cfg.rto_max);
        // RFC 6298 5.7 / Linux: a valid sample clears the backoff (`rto` was just
        // recomputed from srtt and rttvar, dropping any doubling).
    }

    /// Linux `tcp_update_rtt_min`, fed `ca_rtt_us`: the windowed minimum into
    /// `tp.min_rtt_us`. Linux's filter (`minmax_running_min`, lib/minmax.c) also keeps
    /// second and third choices, but for a running minimum they never take over: a sample
    /// found when the best is older than the window resets all three to itself, as here.
    /// Linux skips a sample it suspects of a delayed ACK (`FLAG_ACK_MAYBE_DELAYED`: one
    /// segment of less than an MSS); the simulator's segments are whole MSS.
    pub(super) fn update_min_rtt(&mut self, tp: &mut TcpState, now: Time, ca_rtt_us: u64) {
        let m = ca_rtt_us.min(u32::MAX as u64) as u32;
        let now_jiffies = tp.jiffies_at(now.as_micros());
        let window = MIN_RTT_WINDOW_SECS.saturating_mul(tp.hz);
        if m <= tp.min_rtt_us || now_jiffies.wrapping_sub(self.min_rtt_stamp) > window {
            tp.min_rtt_us = m;
            self.min_rtt_stamp = now_jiffies;
        }
    }
}

/// One ACK's RTT samples, as Linux takes them at the end of `tcp_clean_rtx_queue` and in
/// `tcp_ack_update_rtt`: the sequence sample from the oldest cumulatively acknowledged
/// segment unless retransmitted data was acknowledged, else the SACK sample from the
/// lowest newly SACKed segment, else, if the ACK advanced `snd_una`, the echoed timestamp
/// (RFC 7323 RTTM: the receiver echoes the segment that advanced its window, so this is a
/// real round trip even when that segment was a retransmission). `ca_rtt_us` comes from
/// the highest newly SACKed segment if any, else from the newest cumulatively
/// acknowledged one (or from the timestamp, with the sequence sample). Samples are at
/// least 1 us.
pub(super) fn rtt_samples(now: Time, t: &AckedTimes, advanced: bool, tsecr: Time) -> RttSamples {
    let since = |sent: u64| (now.0.saturating_sub(sent) / 1000).max(1);
    let mut r = RttSamples::default();
    if !t.retrans_acked {
        r.seq_rtt_us = t.first_ackt.map(since);
        r.ca_rtt_us = t.last_ackt.map(since);
    }
    if let (Some((_, first)), Some((_, last))) = (t.first_sackt, t.last_sackt) {
        r.seq_rtt_us = r.seq_rtt_us.or(Some(since(first)));
        r.ca_rtt_us = Some(since(last));
    }
    if r.seq_rtt_us.is_none() && advanced && tsecr > Time::ZERO {
        // The timestamps tick in microseconds here (Linux's usec TS option); default
        // Linux ticks in milliseconds.
        r.seq_rtt_us = Some(since(tsecr.0));
        r.ca_rtt_us = r.seq_rtt_us;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::LOST;

    const MS: u64 = 1_000_000;

    fn samples(t: &AckedTimes, advanced: bool, tsecr_ms: u64) -> (Option<u64>, Option<u64>) {
        let r = rtt_samples(Time(1000 * MS), t, advanced, Time(tsecr_ms * MS));
        (r.seq_rtt_us, r.ca_rtt_us)
    }

    #[test]
    fn cumulative_ack_samples_its_oldest_and_newest_segments() {
        let mut t = AckedTimes::default();
        t.cumulatively_acked(0, 900 * MS);
        t.cumulatively_acked(SACKED, 930 * MS); // SACKed earlier: no sample from it
        t.cumulatively_acked(0, 920 * MS);
        assert_eq!(samples(&t, true, 0), (Some(100_000), Some(80_000)));
    }

    #[test]
    fn retransmitted_data_voids_the_sequence_sample_and_the_timestamp_stands_in() {
        // A NewReno partial ACK: the retransmitted hole (resent at 950 ms) and segments
        // above it sent at 100 ms, which waited at the receiver behind the hole.
        let mut t = AckedTimes::default();
        t.cumulatively_acked(EVER_RETRANS | LOST, 950 * MS);
        t.cumulatively_acked(0, 100 * MS);
        t.cumulatively_acked(0, 101 * MS);
        assert_eq!(samples(&t, true, 950), (Some(50_000), Some(50_000)));
        // A retransmitted segment SACKed before counts too (Linux tests TCPCB_RETRANS first).
        let mut t = AckedTimes::default();
        t.cumulatively_acked(0, 100 * MS);
        t.cumulatively_acked(SACKED | EVER_RETRANS, 950 * MS);
        assert_eq!(samples(&t, true, 960), (Some(40_000), Some(40_000)));
        // No timestamp echoed: no sample at all.
        assert_eq!(samples(&t, true, 0), (None, None));
    }

    #[test]
    fn sack_sample_fills_in_for_the_estimator_and_gives_ca_rtt() {
        let mut t = AckedTimes::default();
        t.newly_sacked(0, 12, 960 * MS);
        t.newly_sacked(0, 10, 940 * MS);
        t.newly_sacked(EVER_RETRANS, 11, 990 * MS); // a retransmission: not sampled
        assert_eq!(samples(&t, false, 0), (Some(60_000), Some(40_000)), "lowest, highest");
        // With a cumulative sample too, the estimator takes the cumulative one and ca_rtt
        // the newest SACKed segment's.
        t.cumulatively_acked(0, 900 * MS);
        assert_eq!(samples(&t, true, 0), (Some(100_000), Some(40_000)));
    }

    #[test]
    fn timestamp_is_used_only_when_the_ack_advances_snd_una() {
        let t = AckedTimes { retrans_acked: true, ..Default::default() };
        assert_eq!(samples(&t, false, 990), (None, None), "a duplicate ACK measures nothing");
        assert_eq!(samples(&t, true, 1000), (Some(1), Some(1)), "at least 1 us");
    }

    /// One millisecond in microseconds (the estimator's unit).
    const MSU: u64 = 1000;

    fn cfg(rto_min_ms: u64, rto_max_ms: u64) -> TcpConfig {
        TcpConfig {
            rto_min: Duration::from_millis(rto_min_ms),
            rto_max: Duration::from_millis(rto_max_ms),
            ..Default::default()
        }
    }

    #[test]
    fn first_sample_sets_srtt_and_rto_is_srtt_plus_four_deviations() {
        // RFC 6298 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 3R.
        let mut e = RttEstimator::new(Duration::from_secs(1));
        let mut srtt = 0;
        e.on_sample(&mut srtt, 100 * MSU, 0, 10, &cfg(20, 60_000));
        assert_eq!(srtt, 8 * 100_000, "Linux keeps srtt scaled by 8");
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn rto_min_enters_through_rttvar() {
        // A 10 ms path with rto_min 200 ms: RTO = srtt + rto_min, not max(3R, rto_min).
        let mut e = RttEstimator::new(Duration::from_secs(1));
        let mut srtt = 0;
        e.on_sample(&mut srtt, 10 * MSU, 0, 10, &cfg(200, 60_000));
        assert_eq!(e.rto(), Duration::from_millis(210));
    }

    #[test]
    fn later_samples_smooth_srtt_and_a_jump_raises_the_variation() {
        let mut e = RttEstimator::new(Duration::from_secs(1));
        let mut srtt = 0;
        let c = cfg(200, 60_000);
        e.on_sample(&mut srtt, 100 * MSU, 0, 10, &c);
        // 300 ms: srtt += (300 - 100) / 8 = 125 ms; mdev = 200 + (200 - 200/4) = 350 ms
        // (scaled by 4), which becomes rttvar at once.
        e.on_sample(&mut srtt, 300 * MSU, 0, 10, &c);
        assert_eq!(srtt >> 3, 125_000);
        assert_eq!(e.rto(), Duration::from_millis(125 + 350));
        // A sample equal to srtt leaves it, and rttvar holds within the window.
        e.on_sample(&mut srtt, 125 * MSU, 5, 10, &c);
        assert_eq!((srtt >> 3, e.rto()), (125_000, Duration::from_millis(475)));
        // Once snd_una passes a window's end, rttvar decays a quarter of the way toward
        // the largest deviation seen in that window, floored at rto_min. The first window
        // saw 350 ms: no decay; the next only smaller ones, so rttvar heads for 200 ms.
        e.on_sample(&mut srtt, 125 * MSU, 11, 20, &c);
        assert_eq!(e.rto(), Duration::from_millis(475));
        e.on_sample(&mut srtt, 125 * MSU, 21, 30, &c);
        assert_eq!(e.rto(), Duration::from_micros(125_000 + 350_000 - (350_000 - 200_000) / 4));
    }

    #[test]
    fn backoff_doubles_up_to_rto_max_and_a_sample_clears_it() {
        let mut e = RttEstimator::new(Duration::from_millis(300));
        e.back_off(Duration::from_millis(1000));
        assert_eq!(e.rto(), Duration::from_millis(600));
        e.back_off(Duration::from_millis(1000));
        assert_eq!(e.rto(), Duration::from_millis(1000));
        let mut srtt = 0;
        e.on_sample(&mut srtt, 100 * MSU, 0, 1, &cfg(20, 1000));
        assert_eq!(e.rto(), Duration::from_millis(300));
        // rto_max also caps the computed value.
        e.on_sample(&mut srtt, 5000 * MSU, 0, 1, &cfg(20, 1000));
        assert_eq!(e.rto(), Duration::from_millis(1000));
    }

    #[test]
    fn min_rtt_keeps_the_lowest_sample_for_linuxs_300_seconds() {
        let mut e = RttEstimator::new(Duration::from_secs(1));
        let mut tp = TcpState::new(1448, 10);
        tp.hz = 250;
        let s = |secs: u64| Time(secs * 1_000_000_000);
        e.update_min_rtt(&mut tp, s(0), 50 * MSU);
        e.update_min_rtt(&mut tp, s(11), 60 * MSU);
        assert_eq!(tp.min_rtt_us, 50_000, "kept past 10 s (BBR's window, not TCP's)");
        e.update_min_rtt(&mut tp, s(20), 40 * MSU);
        assert_eq!(tp.min_rtt_us, 40_000, "a lower sample restarts the window");
        e.update_min_rtt(&mut tp, s(320) + Duration::from_micros(3999), 70 * MSU);
        assert_eq!(tp.min_rtt_us, 40_000, "300 s and less than a jiffy: still valid");
        e.update_min_rtt(&mut tp, s(320) + Duration::from_millis(4), 70 * MSU);
        assert_eq!(tp.min_rtt_us, 70_000, "a jiffy more: the new sample replaces it");
    }
}
