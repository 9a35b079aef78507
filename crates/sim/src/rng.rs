//! Seeded random numbers: xoshiro256** (Blackman & Vigna, 2018) seeded through
//! splitmix64, written here from the published algorithm so the crate has no
//! dependencies and every run is reproducible. Each component (loss model, queue, each
//! cross-traffic source) draws from its own stream, derived from the run's seed and a
//! component tag, so adding a flow does not shift another component's random numbers.

/// splitmix64 step (Steele, Lea & Flood 2014): a good 64-bit mixer for seeding.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// Component tags for [`Rng::stream`].
pub mod stream {
    pub const LOSS: u64 = 1;
    pub const QUEUE: u64 = 2;
    pub const CROSS: u64 = 3;
    /// Web-like transfers drawn when a scenario is read (`arrivals`).
    pub const WEB: u64 = 4;
    /// Each flow's host processing time (`TcpConfig::host_delay`).
    pub const HOST: u64 = 5;
    pub const TEST: u64 = 99;
}

impl Rng {
    /// A generator seeded from one 64-bit value.
    pub fn from_seed(seed: u64) -> Rng {
        let mut sm = seed;
        let s =
            [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }

    /// The independent stream of component (`tag`, `index`) in a run seeded with `seed`.
    pub fn stream(seed: u64, tag: u64, index: u64) -> Rng {
        let mut m = seed ^ tag.wrapping_mul(0xA076_1D64_78BD_642F);
        let a = splitmix64(&mut m);
        let mut m2 = a ^ index.wrapping_mul(0xE703_7ED1_A0B4_28DB);
        Rng::from_seed(splitmix64(&mut m2))
    }

    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1) with 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Exponentially distributed with mean `mean` (inverse transform).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Uniform integer in [0, n) (n > 0), by Lemire's multiply-shift (tiny bias, fine here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Rng::stream(1, stream::LOSS, 0), |r, _: u64| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Rng::stream(1, stream::LOSS, 0), |r, _: u64| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Rng::stream(1, stream::LOSS, 1), |r, _: u64| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn uniform_mean_and_exponential_mean_are_right() {
        let mut r = Rng::from_seed(7);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.005, "{m}");
        let e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((e - 3.0).abs() < 0.05, "{e}");
    }
}
