//! The allowed values of the TCP-level settings every flow takes besides its algorithm,
//! in one table: scenario files, live changes, the simulator's own checks, the
//! emulator's testbed and `cclab kernel route` all accept exactly these ranges.
//!
//! It lives here, in the crate everything else depends on, so that no user needs another.

/// The allowed range of one TCP-level setting: whole numbers of `unit` in `[min, max]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpLimit {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
    pub unit: &'static str,
}

impl TcpLimit {
    pub const fn contains(&self, value: u64) -> bool {
        value >= self.min && value <= self.max
    }

    /// The range in words, e.g. "a whole number from 1 to 1000 segments".
    pub fn allowed(&self) -> String {
        format!("a whole number from {} to {} {}", self.min, self.max, self.unit)
    }
}

/// `rto_min` (Linux's route metric `RTAX_RTO_MIN`, set with `ip route ... rto_min`), in
/// milliseconds: at most 60 s, the smallest upper bound RFC 6298 (2.5) allows a stack to
/// put on the RTO, so that every stack honours the minimum it is given.
pub const RTO_MIN_MS: TcpLimit = TcpLimit { name: "rto_min", min: 1, max: 60_000, unit: "ms" };

/// `initcwnd` (Linux's route metric `RTAX_INITCWND`), in segments: at least one, at most
/// 1000, cclab's bound (Linux's default is 10, RFC 6928).
pub const INITCWND: TcpLimit = TcpLimit { name: "initcwnd", min: 1, max: 1000, unit: "segments" };

/// `mss`, payload bytes per segment: from Linux's `TCP_MIN_MSS` (88, include/net/tcp.h)
/// to 9000, a jumbo frame.
pub const MSS: TcpLimit = TcpLimit { name: "mss", min: 88, max: 9000, unit: "bytes" };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_inclusive_and_say_their_unit() {
        assert!(INITCWND.contains(1) && INITCWND.contains(1000));
        assert!(!INITCWND.contains(0) && !INITCWND.contains(1001));
        assert_eq!(RTO_MIN_MS.allowed(), "a whole number from 1 to 60000 ms");
        assert_eq!(MSS.allowed(), "a whole number from 88 to 9000 bytes");
    }
}
