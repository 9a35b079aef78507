//! Web-like background traffic: a `[[flows]]` entry with
//! `arrivals = { rate, mean_size, shape }` stands for finite TCP transfers that arrive as
//! a Poisson process of `rate` per second between the entry's `start` and `stop` (default:
//! the end of the run), each of a size drawn from a Pareto distribution with the given
//! mean and shape, each run to its end (or the end of the run).
//!
//! Where the model comes from: heavy-tailed transfer sizes are what web traffic measures
//! (Crovella and Bestavros, "Self-similarity in World Wide Web traffic", IEEE/ACM ToN
//! 1997; Barford and Crovella's Surge, SIGMETRICS 1998, with a Pareto tail of shape about
//! 1.1 to 1.2), and ns-2's HTTP examples (`tcl/ex/web-traffic.tcl`, "ns by example"'s
//! `ex-web.tcl`) draw object sizes from a Pareto-II law of shape 1.2 with a mean of 10
//! packets. cclab uses the plain (type I) Pareto law, whose smallest size is
//! `mean_size * (shape - 1) / shape`; its defaults are ns-2's shape 1.2 and a mean of 10
//! full segments of the flow's MSS.
//!
//! The arrivals are drawn when the scenario is read, from the scenario's seed and the
//! entry's index (their own random stream), so the same file and seed give the same
//! transfers, and `seeds = N` in a sweep gives N different draws.

use crate::fields::Fields;
use crate::ScenarioError;
use cclab_sim::rng::{stream, Rng};
use cclab_sim::FlowConfig;
use cclab_units::{Duration, Time};

const ARRIVALS: &[&str] = &["rate", "mean_size", "shape"];
/// Most arrivals per second: beyond this a run is more transfers than any link here
/// carries, and the flow limit is soon reached.
const MAX_RATE: f64 = 10_000.0;
/// The Pareto shape's range: above 1 the mean is finite; 10 is already nearly constant.
const SHAPE: (f64, f64) = (1.0, 10.0);
/// ns-2's shape for web object sizes.
const DEFAULT_SHAPE: f64 = 1.2;
/// ns-2's mean object size, in full segments.
const DEFAULT_MEAN_SEGMENTS: u64 = 10;

/// The transfers of the `[[flows]]` entry read by `f` (index `index` in the file): each
/// one's start and size in bytes. At most `room` + 1 are drawn: one more than fit tells
/// the caller the scenario has too many flows.
pub(crate) fn read(
    f: &Fields,
    flow: &FlowConfig,
    (duration, room): (Duration, u64),
    seed: u64,
    index: u64,
) -> Result<Vec<(Time, u64)>, ScenarioError> {
    let ctx = f.ctx;
    for clash in ["count", "bytes"] {
        if let Some(n) = f.get(clash) {
            return Err(ctx.bad(n, &f.field(clash), format!("{} is set by arrivals (each transfer's size is drawn, and their number follows the rate); remove it", f.field(clash))));
        }
    }
    let node = f.get("arrivals").expect("the caller saw arrivals");
    let path = f.field("arrivals");
    let a = Fields::new(ctx, &path, node, ARRIVALS)?;
    let rate = a
        .number("rate", "transfers per second")?
        .ok_or_else(|| a.missing("rate", "new transfers per second, e.g. 2.5"))?;
    if !(rate > 0.0 && rate <= MAX_RATE) {
        let n = a.get("rate").expect("rate was read");
        return Err(ctx.bad(
            n,
            &a.field("rate"),
            format!("allowed: more than 0 and at most {MAX_RATE} transfers per second"),
        ));
    }
    let shape = a.number("shape", "a number")?.unwrap_or(DEFAULT_SHAPE);
    if !(shape > SHAPE.0 && shape <= SHAPE.1) {
        let n = a.get("shape").expect("shape was read");
        return Err(ctx.bad(
            n,
            &a.field("shape"),
            format!("allowed: more than {} (a finite mean) and at most {}", SHAPE.0, SHAPE.1),
        ));
    }
    let mss = u64::from(flow.tcp.mss);
    let mean = a.bytes("mean_size")?.unwrap_or(DEFAULT_MEAN_SEGMENTS * mss);
    if mean == 0 {
        let n = a.get("mean_size").expect("mean_size was read");
        return Err(ctx.bad(n, &a.field("mean_size"), "allowed: at least 1 byte"));
    }
    let end = flow.stop.map_or(duration.as_nanos(), |s| s.as_nanos().min(duration.as_nanos()));
    let mut rng = Rng::stream(seed, stream::WEB, index);
    let window = (flow.start.as_nanos(), end);
    Ok(draw(&mut rng, rate, mean as f64, shape, window, room.saturating_add(1)))
}

/// Poisson arrivals of `rate` per second in `[from_ns, to_ns)`, at most `most` of them,
/// each with a Pareto size of mean `mean` bytes and shape `shape` (at least one byte).
fn draw(
    rng: &mut Rng,
    rate: f64,
    mean: f64,
    shape: f64,
    (from_ns, to_ns): (u64, u64),
    most: u64,
) -> Vec<(Time, u64)> {
    let scale = mean * (shape - 1.0) / shape;
    let mut out = Vec::new();
    let mut t = from_ns as f64;
    loop {
        t += rng.exponential(1e9 / rate);
        if t >= to_ns as f64 || out.len() as u64 >= most {
            return out;
        }
        // Inverse transform: 1 - U is in (0, 1], so the size is finite.
        let size = scale / (1.0 - rng.uniform()).powf(1.0 / shape);
        out.push((Time(t as u64), size.ceil().clamp(1.0, u64::MAX as f64) as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_and_sizes_follow_their_configured_laws() {
        let mut rng = Rng::stream(7, stream::TEST, 0);
        let (rate, mean, shape) = (50.0, 20_000.0, 2.5);
        let got = draw(&mut rng, rate, mean, shape, (0, 400_000_000_000), u64::MAX);
        // 20,000 arrivals expected in 400 s; the count's s.d. is about 141.
        assert!((got.len() as f64 - 20_000.0).abs() < 600.0, "{}", got.len());
        assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
        let sizes: Vec<f64> = got.iter().map(|g| g.1 as f64).collect();
        let avg = sizes.iter().sum::<f64>() / sizes.len() as f64;
        // Shape 2.5 has a finite variance, so the sample mean settles (within ~2%).
        assert!((avg / mean - 1.0).abs() < 0.05, "mean size {avg}");
        let floor = mean * (shape - 1.0) / shape;
        assert!(sizes.iter().all(|&x| x >= floor.floor()), "no size below the scale");
        // The tail: P(X > 2 * scale) = 2^-shape.
        let above = sizes.iter().filter(|&&x| x > 2.0 * floor).count() as f64 / sizes.len() as f64;
        assert!((above - 2f64.powf(-shape)).abs() < 0.01, "tail {above}");
    }

    #[test]
    fn no_arrival_outside_the_window() {
        let mut rng = Rng::stream(1, stream::TEST, 0);
        let got = draw(&mut rng, 100.0, 1000.0, 1.2, (5_000_000_000, 6_000_000_000), u64::MAX);
        assert!(got.iter().all(|g| g.0 .0 >= 5_000_000_000 && g.0 .0 < 6_000_000_000));
        assert!(!got.is_empty());
    }
}
