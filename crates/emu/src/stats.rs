//! Per-direction counters and the lateness histogram (how late each packet left compared
//! with its scheduled time). Fixed-size, so recording a packet never allocates.

use cclab_units::Duration;

/// Histogram of lateness with 1 µs buckets up to 20 ms, and the exact maximum.
#[derive(Clone)]
pub struct Lateness {
    buckets: Box<[u64]>,
    overflow: u64,
    count: u64,
    max: Duration,
    sum_ns: u128,
}

const BUCKET_NS: u64 = 1_000;
const BUCKETS: usize = 20_000;

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            buckets: vec![0; BUCKETS].into_boxed_slice(),
            overflow: 0,
            count: 0,
            max: Duration::ZERO,
            sum_ns: 0,
        }
    }
}

impl Lateness {
    pub fn record(&mut self, late: Duration) {
        let b = (late.as_nanos() / BUCKET_NS) as usize;
        match self.buckets.get_mut(b) {
            Some(c) => *c += 1,
            None => self.overflow += 1,
        }
        self.count += 1;
        self.sum_ns += late.as_nanos() as u128;
        self.max = self.max.max(late);
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn max(&self) -> Duration {
        self.max
    }
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        Duration((self.sum_ns / self.count as u128) as u64)
    }
    /// The `q`-quantile (0..=1), as the upper edge of its 1 µs bucket (the maximum when it
    /// falls beyond the last bucket); zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Duration(((i as u64 + 1) * BUCKET_NS).min(self.max.as_nanos()));
            }
        }
        self.max
    }
    /// Deliveries later than `limit` (to the 1 µs bucket: a delivery in `limit`'s own
    /// bucket counts as not later).
    pub fn beyond(&self, limit: Duration) -> u64 {
        let first = ((limit.as_nanos() / BUCKET_NS) as usize + 1).min(BUCKETS);
        self.buckets[first..].iter().sum::<u64>() + self.overflow
    }
    pub fn merge(&mut self, other: &Lateness) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.overflow += other.overflow;
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max = self.max.max(other.max);
    }
}

/// What happened to one direction's packets.
#[derive(Clone, Default)]
pub struct DirectionStats {
    /// When the first packet arrived (emulator time).
    pub first_arrival: Option<cclab_units::Time>,
    /// Packets read from the sending side.
    pub arrived_packets: u64,
    pub arrived_bytes: u64,
    /// Packets that left the link (finished their transmission), onto the delay line:
    /// what the simulator counts as the bottleneck's delivered packets.
    pub departed_packets: u64,
    pub departed_bytes: u64,
    /// Packets written to the receiving side.
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Dropped by the queue (overflow or AQM).
    pub queue_drops: u64,
    /// Taken by the random loss model.
    pub random_losses: u64,
    /// Writes the kernel refused on the receiving side.
    pub write_errors: u64,
    /// Packets lost (queue drops and random losses) by IPv4 destination address, in order
    /// of each address's first loss. The testbed gives each flow its own receiver
    /// address, so on its uplink this is each flow's lost data.
    pub drops_by_destination: Vec<(u32, u64)>,
    /// Lateness of each delivery against its scheduled release (departure + delay).
    pub lateness: Lateness,
}

impl DirectionStats {
    /// Counts a packet to `destination` (IPv4, 0 for other packets) as lost. Only a run's
    /// first loss to each address allocates.
    pub fn count_drop(&mut self, destination: u32) {
        match self.drops_by_destination.iter_mut().find(|(a, _)| *a == destination) {
            Some((_, n)) => *n += 1,
            None => self.drops_by_destination.push((destination, 1)),
        }
    }

    /// Packets to `destination` lost so far.
    pub fn drops_to(&self, destination: u32) -> u64 {
        self.drops_by_destination.iter().find(|(a, _)| *a == destination).map_or(0, |(_, n)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_recorded_values() {
        let mut h = Lateness::default();
        assert_eq!(h.quantile(0.99), Duration::ZERO);
        for us in 1..=100 {
            h.record(Duration::from_micros(us));
        }
        h.record(Duration::from_millis(50)); // beyond the buckets
        assert_eq!(h.count(), 101);
        assert_eq!(h.quantile(0.5), Duration::from_micros(52));
        assert_eq!(h.quantile(1.0), Duration::from_millis(50));
        assert_eq!(h.max(), Duration::from_millis(50));
        // Later than 50 us: 51 to 100 us and the one beyond the buckets.
        assert_eq!(h.beyond(Duration::from_micros(50)), 51);
        assert_eq!(h.beyond(Duration::ZERO), 101);
        assert_eq!(h.beyond(Duration::from_secs(1)), 1);
        let mut g = Lateness::default();
        g.record(Duration::from_micros(3));
        g.merge(&h);
        assert_eq!(g.count(), 102);
    }

    #[test]
    fn drops_are_counted_by_destination() {
        let mut s = DirectionStats::default();
        for dst in [7, 9, 7, 7, 0] {
            s.count_drop(dst);
        }
        assert_eq!((s.drops_to(7), s.drops_to(9), s.drops_to(0), s.drops_to(8)), (3, 1, 1, 0));
        assert_eq!(s.drops_by_destination, vec![(7, 3), (9, 1), (0, 1)]);
    }
}
