//! The algorithms this crate loads into the kernel, their tunables and the fixed-point
//! layout of the maps that hold them (`bpf/cclab_params.h`, mirrored here field for field).
//!
//! Parameter names, defaults and ranges are [`ParamSpec`]s, as everywhere in cclab, so
//! `cclab kernel set` refuses exactly what a scenario file would. Values are written to the
//! map in the units Linux and TCPTuner use: beta in 1/1024, alpha in 1/512 (both rounded
//! to nearest), switches as 0/1, N in 1/1024.

use crate::error::Error;
use cclab_cc::{ParamKind, ParamSpec};

/// cclab_tuner's parameters: Linux CUBIC's module parameters plus TCPTuner's alpha, with
/// TCPTuner's GUI ranges for alpha (0, 2] and beta (0, 1].
pub const TUNER_PARAMS: &[ParamSpec] = &[
    ParamSpec::float_open_min("alpha", 1.0, 0.0, 2.0, "", "TCPTuner: W_max is multiplied by alpha after each loss"),
    ParamSpec::float_open_min("beta", 0.7, 0.0, 1.0, "", "multiplicative decrease: cwnd becomes beta * cwnd at a loss"),
    ParamSpec::switch("fast_convergence", true, "lower W_max when it shrank since the last loss, releasing bandwidth"),
    ParamSpec::switch("tcp_friendliness", true, "never grow slower than Reno would"),
    ParamSpec::switch("hystart", true, "hybrid slow start (leave slow start early on ACK trains or delay increase)"),
    ParamSpec::int("hystart_detect", 3, 0, 3, "", "HyStart detectors: 1 ACK train, 2 delay, 3 both"),
    ParamSpec::int("hystart_low_window", 16, 0, 1_000_000, "packets", "HyStart only acts above this cwnd"),
    ParamSpec::int("hystart_ack_delta_us", 2000, 0, 1_000_000, "us", "ACKs closer than this form a train"),
    ParamSpec::int("initial_ssthresh", 0, 0, 0x7fff_ffff, "packets", "initial slow-start threshold when HyStart is off (0: none)"),
    ParamSpec::int("bic_scale", 41, 1, 400, "1/1024", "cubic scaling: C = bic_scale * 10 / 1024 (41: C = 0.4)"),
];

/// cclab_cubic_fit's parameters. N itself is the algorithm's state, not a parameter.
pub const FIT_PARAMS: &[ParamSpec] = &[
    ParamSpec::switch("fast_convergence", true, "lower W_max when it shrank since the last loss"),
    ParamSpec::switch("tcp_friendliness", true, "never grow slower than N Reno flows would"),
    ParamSpec::switch("hystart", true, "hybrid slow start"),
    ParamSpec::int("hystart_detect", 3, 0, 3, "", "HyStart detectors: 1 ACK train, 2 delay, 3 both"),
    ParamSpec::int("hystart_low_window", 16, 0, 1_000_000, "packets", "HyStart only acts above this cwnd"),
    ParamSpec::int("hystart_ack_delta_us", 2000, 0, 1_000_000, "us", "ACKs closer than this form a train"),
    ParamSpec::int("initial_ssthresh", 0, 0, 0x7fff_ffff, "packets", "initial slow-start threshold when HyStart is off (0: none)"),
    ParamSpec::int("bic_scale", 41, 1, 400, "1/1024", "cubic scaling: C = bic_scale * 10 / 1024"),
    ParamSpec::int("update_interval_ms", 500, 1, 60_000, "ms", "period of the N update (Eq. 6); 500 ms in the paper"),
    ParamSpec::float("n_max", 128.0, 1.0, 128.0, "flows", "upper bound on N (the paper has none; keeps the fixed point in range)"),
];

/// A loadable algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Tuner,
    CubicFit,
}

const TUNER_OBJ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cclab_tuner.bpf.o"));
const FIT_OBJ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cclab_cubic_fit.bpf.o"));

impl Algo {
    pub const ALL: [Algo; 2] = [Algo::Tuner, Algo::CubicFit];

    /// The name the kernel registers (`tcp_available_congestion_control`, TCP_CONGESTION).
    pub fn name(self) -> &'static str {
        match self {
            Algo::Tuner => "cclab_tuner",
            Algo::CubicFit => "cclab_cubic_fit",
        }
    }

    /// Accepts the kernel name or the crates/cc name (`tuner`, `cubic-fit`).
    pub fn parse(name: &str) -> Result<Algo, Error> {
        match name {
            "cclab_tuner" | "tuner" => Ok(Algo::Tuner),
            "cclab_cubic_fit" | "cubic-fit" | "cubic_fit" => Ok(Algo::CubicFit),
            _ => Err(Error::UnknownAlgorithm { name: name.to_string() }),
        }
    }

    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            Algo::Tuner => TUNER_PARAMS,
            Algo::CubicFit => FIT_PARAMS,
        }
    }

    pub(crate) fn object(self) -> &'static [u8] {
        match self {
            Algo::Tuner => TUNER_OBJ,
            Algo::CubicFit => FIT_OBJ,
        }
    }

    /// The BPF map holding the tunables, and the one holding exported state (if any).
    pub(crate) fn params_map(self) -> &'static str {
        match self {
            Algo::Tuner => "tuner_params",
            Algo::CubicFit => "fit_params",
        }
    }

    pub(crate) fn stats_map(self) -> Option<&'static str> {
        match self {
            Algo::Tuner => None,
            Algo::CubicFit => Some("fit_stats"),
        }
    }

    pub fn spec(self, name: &str) -> Result<&'static ParamSpec, Error> {
        self.params().iter().find(|p| p.name == name).ok_or_else(|| {
            let known: Vec<_> = self.params().iter().map(|p| p.name).collect();
            Error::Param(format!("{} has no parameter \"{name}\"; its parameters are: {}", self.name(), known.join(", ")))
        })
    }

    /// The defaults, as stored in the map.
    pub fn default_values(self) -> Vec<f64> {
        self.params().iter().map(|p| p.default).collect()
    }

    /// Encodes values (in `params()` order) into the map's value bytes.
    pub fn encode(self, values: &[f64]) -> Vec<u8> {
        let words: Vec<u32> = self.params().iter().zip(values).map(|(p, &v)| to_fixed(self, p.name, v)).collect();
        words.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    /// Decodes the map's value bytes into values (in `params()` order).
    pub fn decode(self, bytes: &[u8]) -> Vec<f64> {
        self.params()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let w = bytes.get(4 * i..4 * i + 4).map(|b| u32::from_ne_bytes(b.try_into().unwrap())).unwrap_or(0);
                from_fixed(self, p.name, w)
            })
            .collect()
    }

    /// Validates `name=value` against the ParamSpec; returns the index and the value as
    /// it will be stored (after fixed-point rounding).
    pub fn check(self, name: &str, value: f64) -> Result<(usize, f64), Error> {
        let spec = self.spec(name)?;
        let v = spec.check(self.name(), value).map_err(|e| Error::Param(e.to_string()))?;
        let stored = from_fixed(self, name, to_fixed(self, name, v));
        let idx = self.params().iter().position(|p| p.name == name).unwrap();
        Ok((idx, stored))
    }
}

fn to_fixed(algo: Algo, name: &str, v: f64) -> u32 {
    match (algo, name) {
        (Algo::Tuner, "alpha") => (v * 512.0).round() as u32,
        (Algo::Tuner, "beta") => (v * 1024.0).round() as u32,
        (Algo::CubicFit, "update_interval_ms") => (v * 1000.0).round() as u32, // stored in us
        (Algo::CubicFit, "n_max") => (v * 1024.0).round() as u32,
        _ => v.round() as u32,
    }
}

fn from_fixed(algo: Algo, name: &str, w: u32) -> f64 {
    match (algo, name) {
        (Algo::Tuner, "alpha") => w as f64 / 512.0,
        (Algo::Tuner, "beta") => w as f64 / 1024.0,
        (Algo::CubicFit, "update_interval_ms") => w as f64 / 1000.0,
        (Algo::CubicFit, "n_max") => w as f64 / 1024.0,
        _ => w as f64,
    }
}

/// Parses a value written as in scenario files: numbers, `true`/`false` for switches.
pub fn parse_value(spec: &ParamSpec, algo: &str, text: &str) -> Result<f64, Error> {
    let t = text.trim();
    let bad = || Error::Param(format!("{algo} parameter \"{}\" = \"{t}\" is not valid; allowed: {}", spec.name, spec.allowed()));
    match (spec.kind, t) {
        (ParamKind::Bool, "true" | "on" | "yes") => Ok(1.0),
        (ParamKind::Bool, "false" | "off" | "no") => Ok(0.0),
        _ => t.parse::<f64>().map_err(|_| bad()),
    }
}

/// Formats a stored value for display.
pub fn show_value(spec: &ParamSpec, v: f64) -> String {
    match spec.kind {
        ParamKind::Bool => (if v != 0.0 { "true" } else { "false" }).to_string(),
        ParamKind::Int => format!("{}", v as i64),
        ParamKind::Float => format!("{}", v),
    }
}

/// What cclab_cubic_fit exports after each N update (`struct cclab_fit_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FitStats {
    pub n: f64,
    pub alpha: f64,
    pub rtt_min_us: u32,
    pub rtt_max_us: u32,
    pub rtt_avg_us: u32,
    pub samples: u32,
    pub updates: u32,
    pub cwnd: u32,
}

impl FitStats {
    pub fn decode(b: &[u8]) -> FitStats {
        let w = |i: usize| b.get(4 * i..4 * i + 4).map(|s| u32::from_ne_bytes(s.try_into().unwrap())).unwrap_or(0);
        FitStats {
            n: w(0) as f64 / 1024.0,
            alpha: w(1) as f64 / 65536.0,
            rtt_min_us: w(2),
            rtt_max_us: w(3),
            rtt_avg_us: w(4),
            samples: w(5),
            updates: w(6),
            cwnd: w(7),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_encode_to_linux_fixed_point() {
        let b = Algo::Tuner.encode(&Algo::Tuner.default_values());
        let w: Vec<u32> = b.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(w, vec![512, 717, 1, 1, 1, 3, 16, 2000, 0, 41]);
        let f = Algo::CubicFit.encode(&Algo::CubicFit.default_values());
        let w: Vec<u32> = f.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(w, vec![1, 1, 1, 3, 16, 2000, 0, 41, 500_000, 128 * 1024]);
    }

    #[test]
    fn range_errors_name_parameter_value_and_range() {
        let e = Algo::Tuner.check("beta", 1.5).unwrap_err().to_string();
        assert!(e.contains("\"beta\"") && e.contains("1.5") && e.contains("(0, 1]"), "{e}");
        let e = Algo::Tuner.check("alpha", 0.0).unwrap_err().to_string();
        assert!(e.contains("\"alpha\"") && e.contains("(0, 2]"), "{e}");
        let e = Algo::Tuner.check("gamma", 1.0).unwrap_err().to_string();
        assert!(e.contains("no parameter \"gamma\"") && e.contains("beta"), "{e}");
        assert_eq!(Algo::Tuner.check("beta", 0.5).unwrap(), (1, 0.5));
    }

    #[test]
    fn switches_parse_as_in_scenario_files() {
        let s = Algo::Tuner.spec("fast_convergence").unwrap();
        assert_eq!(parse_value(s, "cclab_tuner", "false").unwrap(), 0.0);
        assert_eq!(parse_value(s, "cclab_tuner", "true").unwrap(), 1.0);
        assert!(parse_value(s, "cclab_tuner", "maybe").is_err());
    }
}
