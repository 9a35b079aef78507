//! UDP cross traffic: when each source sends. One generator for the simulator's event
//! loop and the testbed's real sockets (crates/emu), so a scenario's background traffic
//! has the same timing in both; like the queues, it takes `now` and owns its RNG stream.
//!
//! - CBR: one packet every `packet_bytes * 8 / rate`.
//! - Poisson: exponential gaps with that mean.
//! - Exponential on/off (ns-2's `Application/Traffic/Exponential`): exponential on and
//!   off periods; while on, packets go out `rate / duty` fast, so the long-run mean is
//!   `rate`. The first on period starts at the source's start.
//!
//! Gaps are whole nanoseconds, at least one.

use crate::config::{CrossConfig, CrossKind};
use crate::rng::Rng;
use cclab_units::{Duration, Time};

/// What a source does when its time comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrossStep {
    /// Send one packet now; the next time comes at `next`.
    Send { next: Time },
    /// An off period: send nothing now; wake again at the given time.
    Wait(Time),
    /// The source has stopped.
    Stop,
}

/// One UDP source's schedule.
#[derive(Clone, Debug)]
pub struct CrossSource {
    cfg: CrossConfig,
    rng: Rng,
    /// Mean gap between packets, ns (at the mean rate; exponential sources send faster
    /// while on).
    mean_gap_ns: f64,
    /// Exponential on/off: the gap while on, `mean_gap_ns * duty`, so that the long-run
    /// mean is `rate`.
    on_gap_ns: f64,
    /// Exponential on/off: end of the current on period.
    on_until: Time,
}

impl CrossSource {
    /// `rng` is the source's own stream (`stream::CROSS`, its index).
    pub fn new(cfg: CrossConfig, rng: Rng) -> CrossSource {
        let mean_gap_ns = cfg.packet_bytes as f64 * 8.0 * 1e9 / cfg.rate.0 as f64;
        let on_gap_ns = match cfg.kind {
            CrossKind::Exponential { mean_on, mean_off } => {
                mean_gap_ns * (mean_on.0 as f64 / (mean_on.0 + mean_off.0) as f64)
            }
            CrossKind::Cbr | CrossKind::Poisson => mean_gap_ns,
        };
        CrossSource { cfg, rng, mean_gap_ns, on_gap_ns, on_until: Time::ZERO }
    }

    pub fn config(&self) -> &CrossConfig {
        &self.cfg
    }

    /// The source's time has come at `now` (first at its start, then whenever the
    /// previous step said): what to do, and when to ask again.
    pub fn step(&mut self, now: Time) -> CrossStep {
        if self.cfg.stop.is_some_and(|s| now >= s) {
            return CrossStep::Stop;
        }
        let gap = |ns: f64| Duration(ns.round().max(1.0) as u64);
        let next = match self.cfg.kind {
            CrossKind::Cbr => now + gap(self.mean_gap_ns),
            CrossKind::Poisson => now + gap(self.rng.exponential(self.mean_gap_ns)),
            CrossKind::Exponential { mean_on, mean_off } => {
                let on_gap = gap(self.on_gap_ns);
                if now >= self.on_until {
                    // Start a new on period after an off period (none at the very start).
                    let off = if self.on_until == Time::ZERO && now == self.cfg.start {
                        0.0
                    } else {
                        self.rng.exponential(mean_off.0 as f64)
                    };
                    let start = now + Duration(off.round() as u64);
                    self.on_until = start + gap(self.rng.exponential(mean_on.0 as f64));
                    if start > now {
                        return CrossStep::Wait(start);
                    }
                }
                now + on_gap
            }
        };
        CrossStep::Send { next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_units::Rate;

    fn source(kind: CrossKind) -> CrossSource {
        let cfg = CrossConfig {
            kind,
            rate: Rate::from_mbps(1),
            packet_bytes: 1250,
            start: Time::ZERO,
            stop: Some(Time::from_secs_f64(100.0)),
            direction: crate::config::Direction::Forward,
        };
        CrossSource::new(cfg, Rng::from_seed(9))
    }

    /// Drives a source from its start to `end` and returns the send times.
    fn sends(src: &mut CrossSource, end: Time) -> Vec<Time> {
        let (mut t, mut out) = (src.config().start, Vec::new());
        while t < end {
            match src.step(t) {
                CrossStep::Send { next } => {
                    out.push(t);
                    t = next;
                }
                CrossStep::Wait(at) => t = at,
                CrossStep::Stop => break,
            }
        }
        out
    }

    #[test]
    fn cbr_sends_every_packet_time() {
        // 1250 B at 1 Mbit/s: one packet every 10 ms.
        let got = sends(&mut source(CrossKind::Cbr), Time::from_secs_f64(0.05));
        let ms: Vec<u64> = got.iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(ms, vec![0, 10, 20, 30, 40]);
    }

    #[test]
    fn every_kind_keeps_its_mean_rate_and_stops_at_stop() {
        let end = Time::from_secs_f64(100.0);
        for kind in [
            CrossKind::Poisson,
            CrossKind::Exponential {
                mean_on: Duration::from_millis(200),
                mean_off: Duration::from_millis(300),
            },
        ] {
            let mut src = source(kind);
            let n = sends(&mut src, end + Duration::from_secs(10)).len() as f64;
            // 100 s at 100 packets/s; on/off periods make the count vary more.
            assert!((n - 10_000.0).abs() < 600.0, "{kind:?}: {n} packets");
            assert_eq!(src.step(end), CrossStep::Stop);
        }
    }

    #[test]
    fn on_off_sources_wait_through_their_off_periods() {
        let mut src = source(CrossKind::Exponential {
            mean_on: Duration::from_millis(50),
            mean_off: Duration::from_millis(500),
        });
        let got = sends(&mut src, Time::from_secs_f64(20.0));
        // While on, packets are 10 ms * duty (50/550) = 0.91 ms apart; off periods leave
        // gaps of hundreds of milliseconds.
        let gaps: Vec<u64> = got.windows(2).map(|w| (w[1] - w[0]).0).collect();
        assert!(gaps.iter().filter(|&&g| g == 909_091).count() > gaps.len() / 2);
        assert!(gaps.iter().any(|&g| g > 100_000_000));
    }
}
