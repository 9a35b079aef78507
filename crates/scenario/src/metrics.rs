//! Summary statistics of a run: fairness (Jain's index), throughput ratios, the
//! Bandwidth Stolen Rate of seed `000_…` (CUBIC-FIT), and percentiles.

/// Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984):
/// `(sum x)^2 / (n * sum x^2)`, from 1/n (one flow has everything) to 1 (equal shares).
/// Defined as 1 for an empty list or when every value is zero (nobody is favoured).
pub fn jain(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || sum_sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sum_sq)
    }
}

/// `a / b`, e.g. the goodput of a CUBIC-FIT flow over that of its CUBIC competitor.
/// `None` when `b` is zero.
pub fn throughput_ratio(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| a / b)
}

/// Bandwidth Stolen Rate as seed `000_…` defines it (after its reference [1]): with `t0`
/// the average throughput of S plain CUBIC flows sharing the bottleneck, and `t_prime` the
/// average throughput of S-1 plain CUBIC flows when one of the S is replaced by the flow
/// under test, `Phi = (T0 - T') / T0`. 0 means perfectly friendly; positive means the
/// test flow takes bandwidth from the others. `None` when `t0` is not positive.
pub fn bandwidth_stolen_rate(t0: f64, t_prime: f64) -> Option<f64> {
    (t0 > 0.0).then(|| (t0 - t_prime) / t0)
}

/// The arithmetic mean (`None` for an empty list).
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The `p`-th percentile (0..=100) of `values`, by linear interpolation between the two
/// nearest ranks (Hyndman & Fan type 7, numpy's default). `None` for an empty list or a
/// `p` outside 0..=100. NaNs sort last.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (rank - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_ranges_from_one_over_n_to_one() {
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+3)^2 / (2 * (1+9)) = 16/20.
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
        assert_eq!(jain(&[]), 1.0);
        assert_eq!(jain(&[0.0, 0.0]), 1.0);
        // Scale-free.
        assert!((jain(&[2e6, 6e6]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn ratio_and_stolen_rate() {
        assert_eq!(throughput_ratio(6.0, 3.0), Some(2.0));
        assert_eq!(throughput_ratio(1.0, 0.0), None);
        // Two CUBIC flows got 5 Mbit/s each; next to CUBIC-FIT the CUBIC flow gets 4.25.
        assert!((bandwidth_stolen_rate(5.0, 4.25).unwrap() - 0.15).abs() < 1e-12);
        // Getting more than before is a negative stolen rate, not clamped.
        assert!((bandwidth_stolen_rate(5.0, 5.5).unwrap() + 0.1).abs() < 1e-12);
        assert_eq!(bandwidth_stolen_rate(0.0, 1.0), None);
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&v, 0.0), Some(15.0));
        assert_eq!(percentile(&v, 50.0), Some(35.0));
        assert_eq!(percentile(&v, 100.0), Some(50.0));
        // numpy.percentile([15,20,35,40,50], 40) == 29.0
        assert!((percentile(&v, 40.0).unwrap() - 29.0).abs() < 1e-12);
        // Order of input does not matter.
        assert_eq!(percentile(&[50.0, 15.0, 40.0, 20.0, 35.0], 50.0), Some(35.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 101.0), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
    }
}
