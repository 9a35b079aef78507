//! A compact log-linear histogram for RTT samples (microseconds): 128 linear
//! sub-buckets per power of two, so a reported percentile (the bucket's midpoint) is
//! within 0.4% of the true sample; values below 128 us are exact. Only the span of
//! buckets actually hit is stored, each count as narrow as it needs (one byte until a
//! bucket passes 255), so a flow whose RTT moves within a factor of two holds at most
//! 128 bytes of counts until it has hundreds of samples, and 100,000 flows stay small.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Index of the first stored bucket.
    first: usize,
    counts: Counts,
    n: u64,
    sum: u128,
}

/// The stored buckets' counts, as narrow as the largest needs: a flow of 100,000 has a
/// few dozen RTT samples, and a byte each keeps its histogram a quarter the size. A
/// count about to overflow widens all of them (to u16, then u32).
#[derive(Clone, Debug)]
enum Counts {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Default for Counts {
    fn default() -> Self {
        Counts::U8(Vec::new())
    }
}

/// One bucket's count, at one of the widths.
trait Count: Copy + Default + Into<u64> {
    /// Adds one; false (and unchanged) if the count is at its maximum.
    fn bump(&mut self) -> bool;
}

macro_rules! count_width {
    ($($t:ty),+) => {$(
        impl Count for $t {
            #[inline]
            fn bump(&mut self) -> bool {
                match self.checked_add(1) {
                    Some(v) => {
                        *self = v;
                        true
                    }
                    None => false,
                }
            }
        }
    )+};
}
count_width!(u8, u16, u32);

impl Counts {
    fn len(&self) -> usize {
        match self {
            Counts::U8(c) => c.len(),
            Counts::U16(c) => c.len(),
            Counts::U32(c) => c.len(),
        }
    }

    fn get(&self, k: usize) -> u64 {
        match self {
            Counts::U8(c) => c[k].into(),
            Counts::U16(c) => c[k].into(),
            Counts::U32(c) => c[k].into(),
        }
    }

    /// Adds one to bucket `k` (stored), widening first if its count is full.
    #[inline]
    fn bump(&mut self, k: usize) {
        let done = match self {
            Counts::U8(c) => c[k].bump(),
            Counts::U16(c) => c[k].bump(),
            Counts::U32(c) => c[k].bump(),
        };
        // A u32 count stays at its maximum (billions of samples in one bucket).
        if !done && !matches!(self, Counts::U32(_)) {
            self.widen();
            self.bump(k);
        }
    }

    /// Where the counts lie: their first byte's address and their size in bytes.
    fn memory(&self) -> (usize, usize) {
        match self {
            Counts::U8(c) => (c.as_ptr() as usize, size_of_val(c.as_slice())),
            Counts::U16(c) => (c.as_ptr() as usize, size_of_val(c.as_slice())),
            Counts::U32(c) => (c.as_ptr() as usize, size_of_val(c.as_slice())),
        }
    }

    #[cold]
    fn widen(&mut self) {
        *self = match std::mem::take(self) {
            Counts::U8(c) => Counts::U16(c.into_iter().map(u16::from).collect()),
            Counts::U16(c) => Counts::U32(c.into_iter().map(u32::from).collect()),
            wide => wide,
        };
    }

    /// Stores `grow` more buckets, in front (`front`) or at the end.
    fn grow(&mut self, grow: usize, front: bool) {
        match self {
            Counts::U8(c) => grow_vec(c, grow, front),
            Counts::U16(c) => grow_vec(c, grow, front),
            Counts::U32(c) => grow_vec(c, grow, front),
        }
    }
}

/// Exact growth: the span grows a few buckets at a time and only while the RTT reaches
/// new extremes, so it costs little time and, with many flows, saves the up-to-half of
/// each histogram that doubling would leave unused.
fn grow_vec<T: Count>(c: &mut Vec<T>, grow: usize, front: bool) {
    c.reserve_exact(grow);
    if front {
        c.splice(0..0, std::iter::repeat_n(T::default(), grow));
    } else {
        c.resize(c.len() + grow, T::default());
    }
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
        self.counts.bump(i - self.first);
        self.n += 1;
        self.sum += v as u128;
    }

    /// Where the stored counts lie (address of the first byte, size in bytes), so that a
    /// caller can ask for them to be loaded before a [`record`](Self::record).
    pub(crate) fn counts_memory(&self) -> (usize, usize) {
        self.counts.memory()
    }

    /// Grows the stored span to include bucket `i`, exactly.
    #[cold]
    fn cover(&mut self, i: usize) {
        if self.counts.len() == 0 {
            self.first = i;
            self.counts.grow(1, false);
        } else if i < self.first {
            self.counts.grow(self.first - i, true);
            self.first = i;
        } else {
            self.counts.grow(i - self.first + 1 - self.counts.len(), false);
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
        for k in 0..self.counts.len() {
            seen += self.counts.get(k);
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

    #[test]
    fn counts_widen_past_a_byte_and_two_without_losing_any() {
        let mut h = Histogram::default();
        for _ in 0..70_000 {
            h.record(50);
        }
        h.record(10);
        h.record(90);
        assert!(matches!(h.counts, Counts::U32(_)));
        assert_eq!((h.count(), h.counts.get(50 - 10)), (70_002, 70_000));
        assert_eq!((h.quantile(0.0), h.quantile(0.5), h.quantile(1.0)), (10.0, 50.0, 90.0));
    }
}
