//! A compact log-linear histogram for RTT samples (microseconds): 128 linear
//! sub-buckets per power of two, so a reported percentile (the bucket's midpoint) is
//! within 0.4% of the true sample; values below 128 us are exact. Only the span of
//! buckets actually hit is stored, so a flow whose RTT moves within a factor of four
//! costs about 1 KB, and 10,000 flows stay small.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Index of `counts[0]`.
    first: usize,
    counts: Vec<u32>,
    n: u64,
    sum: u128,
}

#[inline]
fn index_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The midpoint of bucket `i`.
fn value_of(i: usize) -> f64 {
    let i = i as u64;
    if i < SUB {
        return i as f64;
    }
    let e = (i / SUB) as u32 + SUB_BITS - 1;
    let sub = i % SUB;
    let width = 1u64 << (e - SUB_BITS);
    ((SUB + sub) * width) as f64 + (width as f64 - 1.0) / 2.0
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index_of(v);
        // Nearly every sample lands in a bucket already stored (below `first`, the
        // difference wraps and is out of range too).
        if i.wrapping_sub(self.first) >= self.counts.len() {
            self.cover(i);
        }
        self.counts[i - self.first] += 1;
        self.n += 1;
        self.sum += v as u128;
    }

    /// Grows the stored span to include bucket `i`, to exactly that span: the span grows
    /// a few buckets at a time and only while the RTT reaches new extremes, so exact
    /// growth costs little time and, with many flows, saves the up-to-half of each
    /// histogram that doubling would leave unused.
    #[cold]
    fn cover(&mut self, i: usize) {
        if self.counts.is_empty() {
            self.first = i;
            self.counts.reserve_exact(1);
            self.counts.push(0);
        } else if i < self.first {
            let grow = self.first - i;
            self.counts.reserve_exact(grow);
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = i;
        } else {
            let grow = i - self.first + 1 - self.counts.len();
            self.counts.reserve_exact(grow);
            self.counts.resize(i - self.first + 1, 0);
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// The `q`-quantile (0..1) by nearest rank, or 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return value_of(self.first + k);
            }
        }
        value_of(self.first + self.counts.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_half_a_percent() {
        let mut h = Histogram::default();
        let mut xs: Vec<u64> = (0..10_000u64).map(|i| 20_000 + (i * 7919) % 60_000).collect();
        for &x in &xs {
            h.record(x);
        }
        xs.sort();
        for q in [0.5, 0.95, 0.99] {
            let exact = xs[(q * xs.len() as f64).ceil() as usize - 1] as f64;
            let got = h.quantile(q);
            assert!((got - exact).abs() / exact < 0.005, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn small_values_are_exact_and_buckets_grow_both_ways() {
        let mut h = Histogram::default();
        h.record(1000);
        h.record(5);
        h.record(1_000_000_000);
        assert_eq!(h.quantile(0.0), 5.0);
        assert!((h.quantile(0.5) - 1000.0).abs() < 5.0);
        assert!((h.quantile(1.0) - 1e9).abs() / 1e9 < 0.005);
    }
}
