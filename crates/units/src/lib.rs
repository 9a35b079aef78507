//! Units in types (STYLE.md habit 3): integer nanoseconds for time, bytes, bits per second.
//!
//! Every simulator, emulator and algorithm quantity that carries a unit goes through these
//! newtypes, so a delay can never be added to a byte count by accident, and the written
//! forms accepted by scenario files and command-line flags are parsed in exactly one place.
//!
//! Written forms (case-sensitive suffixes, decimal numbers allowed):
//! - time: `ns`, `us`, `ms`, `s` (e.g. `"20ms"`, `"1.5s"`)
//! - rate: `bps`, `Kbps` (or `kbps`), `Mbps`, `Gbps` (decimal SI: 1 Kbps = 1000 bit/s)
//! - size: `B`, `KB` (or `kB`), `MB`, `GB` (decimal SI: 1 KB = 1000 bytes, as iperf and mahimahi use)
//!
//! Written out: [`json`], the JSON writer every crate uses, with fixed decimals and key
//! order so that result files are byte-identical run after run; [`decimal`], the number
//! text it and the other result writers append without `format!`; [`whole_file`], which
//! writes a file whole or not at all; [`interrupt`], which removes what was being written
//! when a command is interrupted.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

pub mod decimal;
pub mod interrupt;
pub mod json;
mod parse;
pub mod stdout;
pub mod whole_file;
pub use parse::{
    is_negative_figure, parse_bytes, parse_duration, parse_rate, UnitError, DURATION_FORM,
    RATE_FORM, SIZE_FORM,
};

/// A point in time: nanoseconds since the start of a run (virtual or wall clock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e9).round() as u64)
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later (never underflows).
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Duration {
        Duration((s * 1e9).round() as u64)
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl Rate {
    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialise `bytes` at this rate, rounded up to the next nanosecond so that a
    /// link never runs faster than its rate. Zero rate gives `Duration::MAX`.
    pub fn tx_time(self, bytes: u64) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        // Per packet on the simulator's bottleneck: a packet's bit-nanoseconds fit in 64
        // bits (up to about 2 GB), and a 64-bit division is several times cheaper than the
        // 128-bit one only larger sizes need. Both round the same way.
        match bytes.checked_mul(8 * 1_000_000_000) {
            Some(bits) => Duration(bits.div_ceil(self.0)),
            None => {
                let bits = bytes as u128 * 8 * 1_000_000_000;
                Duration(bits.div_ceil(self.0 as u128).min(u64::MAX as u128) as u64)
            }
        }
    }
    /// Bytes carried in `d` at this rate (rounded down).
    pub fn bytes_in(self, d: Duration) -> u64 {
        (self.0 as u128 * d.0 as u128 / 8 / 1_000_000_000) as u64
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later; use `saturating_since` where that can happen.
    fn sub(self, rhs: Time) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

/// Writes a duration in the largest unit that keeps it whole (`20ms`, `1500us`, `2s`).
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns != 0 && ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns != 0 && ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

/// Writes a rate in the largest SI unit that keeps it whole (`10Mbps`, `1500Kbps`).
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b != 0 && b.is_multiple_of(1_000_000) {
            write!(f, "{}Mbps", b / 1_000_000)
        } else if b != 0 && b.is_multiple_of(1_000) {
            write!(f, "{}Kbps", b / 1_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_rounds_up_so_links_never_exceed_their_rate() {
        // 1500 B at 12 Mbit/s is exactly 1 ms.
        assert_eq!(Rate::from_mbps(12).tx_time(1500), Duration::from_millis(1));
        // 1 B at 3 bit/s is 8/3 s: rounded up to the next nanosecond.
        assert_eq!(Rate(3).tx_time(1), Duration(2_666_666_667));
        assert_eq!(Rate(0).tx_time(1), Duration::MAX);
        // Sizes whose bit-nanoseconds pass 64 bits take the 128-bit path.
        assert_eq!(Rate::from_mbps(8000).tx_time(3_000_000_000), Duration::from_secs(3));
        assert_eq!(Rate(8).tx_time(u64::MAX / 4), Duration::MAX);
    }

    #[test]
    fn display_round_trips_through_the_parser() {
        for d in [
            Duration::from_millis(20),
            Duration::from_micros(1500),
            Duration::from_secs(3),
            Duration(7),
        ] {
            assert_eq!(parse_duration(&d.to_string()).unwrap(), d);
        }
        for r in [Rate::from_mbps(10), Rate(1_500_000), Rate(999), Rate(2_000_000_000)] {
            assert_eq!(parse_rate(&r.to_string()).unwrap(), r);
        }
    }
}
