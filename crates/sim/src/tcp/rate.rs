//! Delivery-rate sampling, as Linux's net/ipv4/tcp_rate.c does it: each segment remembers
//! the delivery state when it was sent (`tcp_rate_skb_sent`); an ACK takes the most
//! recently sent of the segments it delivers (`tcp_rate_skb_delivered`) and divides what
//! was delivered since by the longer of the send and ACK intervals (`tcp_rate_gen`).
//! Samples shorter than min RTT are void, and a sample taken while the application
//! limited sending says so (`tcp_rate_check_app_limited`).

use super::scoreboard::{SegInfo, APP_LIMITED};
use cclab_units::Time;

/// The flow's rate-sampling state (Linux `tp->delivered_mstamp`, `first_tx_mstamp`,
/// `app_limited`), times in ns.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateSampler {
    /// When `tp->delivered` last grew.
    delivered_time: u64,
    /// Send time of the segment that started the current sending interval.
    first_tx_time: u64,
    /// `tp->app_limited`: the flow is application-limited until `delivered` passes this
    /// (0: not limited).
    app_limited_until: u32,
}

/// The delivery-rate sample being built during one ACK: the send-time state of the most
/// recently sent segment it delivers.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateBuild {
    /// That segment's record, kept whole: an ACK may deliver several segments and only
    /// the last one chosen is read, so its fields are unpacked once, in `sample`.
    latest: Option<SegInfo>,
}

impl RateBuild {
    /// The sample's segment was sent while the flow was application-limited.
    #[inline]
    pub(super) fn is_app_limited(&self) -> bool {
        self.latest.is_some_and(|s| s.flags() & APP_LIMITED != 0)
    }
}

impl RateSampler {
    /// `tcp_rate_skb_sent`: the record of a segment sent at `now`, when `packets_out`
    /// segments were outstanding and `delivered` had been delivered.
    #[inline]
    pub(super) fn on_send(&mut self, now: Time, packets_out: u32, delivered: u32) -> SegInfo {
        if packets_out == 0 {
            self.first_tx_time = now.0;
            self.delivered_time = now.0;
        }
        let mut flags = 0;
        if self.app_limited_until != 0 {
            flags |= APP_LIMITED;
        }
        SegInfo::new(now.0, flags, delivered, self.delivered_time, self.first_tx_time)
    }

    /// `tcp_rate_skb_delivered`: one segment newly delivered (cumulatively or by SACK).
    #[inline]
    pub(super) fn on_delivered(&mut self, info: &SegInfo, rb: &mut RateBuild) {
        // Prefer the most recently sent of the segments delivered by this ACK.
        let sent = info.sent();
        if rb.latest.is_none_or(|l| sent >= l.sent()) {
            rb.latest = Some(*info);
            self.first_tx_time = sent;
        }
    }

    /// `tp->delivered` grew at `now`.
    #[inline]
    pub(super) fn delivered_at(&mut self, now: Time) {
        self.delivered_time = now.0;
    }

    /// `tcp_rate_check_app_limited`, called when sending stopped with cwnd to spare and
    /// nothing left to send: the flow is application-limited until what is delivered and
    /// in flight now has been delivered.
    #[inline]
    pub(super) fn set_app_limited(&mut self, delivered: u32, in_flight: u32) {
        self.app_limited_until = (delivered + in_flight).max(1);
    }

    /// `tcp_rate_gen`, at the end of an ACK that brought `delivered` to its new value:
    /// returns (segments delivered over the interval, interval in us), both 0 when the ACK
    /// delivered nothing; the interval is 0 (void) when shorter than `min_rtt_us`.
    pub(super) fn sample(
        &mut self,
        now: Time,
        rb: &RateBuild,
        delivered: u32,
        min_rtt_us: u32,
    ) -> (u32, u64) {
        if self.app_limited_until != 0 && delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let Some(latest) = rb.latest else {
            return (0, 0);
        };
        let delivered_since = delivered.wrapping_sub(latest.delivered);
        let ack_elapsed = now.0.saturating_sub(latest.delivered_time());
        let interval_us = latest.send_elapsed_us().max(ack_elapsed / 1000);
        if interval_us >= min_rtt_us as u64 {
            (delivered_since, interval_us)
        } else {
            (delivered_since, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_send_after_idle_starts_both_intervals() {
        let mut r = RateSampler::default();
        let a = r.on_send(Time(10 * MS), 0, 7);
        assert_eq!(
            (a.sent(), a.send_elapsed_us(), a.delivered_time(), a.delivered),
            (10 * MS, 0, 10 * MS, 7)
        );
        // With data outstanding, later segments keep the interval's start.
        let b = r.on_send(Time(12 * MS), 1, 7);
        assert_eq!((b.sent(), b.send_elapsed_us(), b.delivered_time()), (12 * MS, 2000, 10 * MS));
        assert_eq!(b.flags() & APP_LIMITED, 0);
    }

    #[test]
    fn rate_is_delivered_over_the_longer_of_send_and_ack_intervals() {
        let mut r = RateSampler::default();
        // Ten segments sent 1 ms apart from t = 0, nothing delivered before.
        let segs: Vec<SegInfo> = (0..10).map(|i| r.on_send(Time(i * MS), i as u32, 0)).collect();
        // One ACK at 100 ms delivers all ten.
        let mut rb = RateBuild::default();
        for s in &segs {
            r.on_delivered(s, &mut rb);
        }
        r.delivered_at(Time(100 * MS));
        // Send interval 9 ms, ACK interval 100 ms: the ACK interval wins.
        assert_eq!(r.sample(Time(100 * MS), &rb, 10, 50_000), (10, 100_000));
        // An interval below min RTT is void, but the delivered count stands.
        assert_eq!(r.sample(Time(100 * MS), &rb, 10, 150_000), (10, 0));
    }

    #[test]
    fn the_most_recently_sent_delivered_segment_gives_the_sample() {
        let mut r = RateSampler::default();
        let old = r.on_send(Time(0), 0, 0);
        let new = r.on_send(Time(5 * MS), 1, 0);
        let mut rb = RateBuild::default();
        r.on_delivered(&new, &mut rb);
        r.on_delivered(&old, &mut rb); // sent earlier: ignored
        let latest = rb.latest.unwrap();
        assert_eq!(latest.sent(), 5 * MS);
        assert_eq!(latest.send_elapsed_us(), 5000);
        // The next interval starts at the sampled segment's send time.
        r.delivered_at(Time(40 * MS));
        let next = r.on_send(Time(41 * MS), 1, 2);
        assert_eq!((next.send_elapsed_us(), next.delivered_time()), (36_000, 40 * MS));
    }

    #[test]
    fn an_ack_delivering_nothing_gives_no_sample() {
        let mut r = RateSampler::default();
        assert_eq!(r.sample(Time(MS), &RateBuild::default(), 3, 0), (0, 0));
    }

    #[test]
    fn app_limited_marks_segments_until_that_data_is_delivered() {
        let mut r = RateSampler::default();
        r.set_app_limited(100, 5); // limited until delivered passes 105
        let s = r.on_send(Time(MS), 5, 100);
        assert_ne!(s.flags() & APP_LIMITED, 0);
        let mut rb = RateBuild::default();
        r.on_delivered(&s, &mut rb);
        assert!(rb.is_app_limited());
        r.sample(Time(2 * MS), &rb, 105, 0);
        assert_ne!(r.on_send(Time(3 * MS), 5, 105).flags() & APP_LIMITED, 0, "not passed yet");
        r.sample(Time(4 * MS), &rb, 106, 0);
        assert_eq!(r.on_send(Time(5 * MS), 5, 106).flags() & APP_LIMITED, 0);
        // Nothing delivered or in flight still counts as limited (0 means "not").
        r.set_app_limited(0, 0);
        assert_ne!(r.on_send(Time(6 * MS), 0, 0).flags() & APP_LIMITED, 0);
    }
}
