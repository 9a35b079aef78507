//! The algorithms this crate loads into the kernel, their tunables and the fixed-point
//! layout of the maps that hold them (`bpf/cclab_params.h`, mirrored here field for field).
//!
//! Parameter names, defaults and ranges are [`ParamSpec`]s, as everywhere in cclab, so
//! `cclab kernel set` refuses exactly what a scenario file would. Values are written to the
//! map in the units Linux and TCPTuner use: beta in 1/1024, alpha in 1/512 (both rounded
//! to nearest), switches as 0/1, N in 1/1024.

use crate::error::Error;
use cclab_cc::{ParamKind, ParamSpec};

/// The fields of `struct cclab_tuner_params` (bpf/cclab_params.h), in order, with their
/// defaults as stored (Linux tcp_cubic.c's module parameters plus TCPTuner's alpha).
const TUNER_FIELDS: &[(&str, u32)] = &[
    ("alpha", 512),
    ("beta", 717),
    ("fast_convergence", 1),
    ("tcp_friendliness", 1),
    ("hystart", 1),
    ("hystart_detect", 3),
    ("hystart_low_window", 16),
    ("hystart_ack_delta_us", 2000),
    ("initial_ssthresh", 0),
    ("bic_scale", 41),
];

/// The fields of `struct cclab_fit_params`, in order, with their defaults as stored. Only
/// those crates/cc lists in `cubic_fit::FIT_PARAMS` can be set; the rest are fixed at
/// Linux CUBIC's defaults and the paper's 500 ms (and crates/cc's cap of 1000 flows).
const FIT_FIELDS: &[(&str, u32)] = &[
    ("fast_convergence", 1),
    ("tcp_friendliness", 1),
    ("hystart", 1),
    ("hystart_detect", 3),
    ("hystart_low_window", 16),
    ("hystart_ack_delta_us", 2000),
    ("initial_ssthresh", 0),
    ("bic_scale", 41),
    ("update_interval_us", 500_000),
    ("n_max", 1000 * 1024),
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

    /// The tunable parameters: crates/cc's specs for `tuner` and `cubic-fit`.
    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            Algo::Tuner => cclab_cc::tuner::TUNER_PARAMS,
            Algo::CubicFit => cclab_cc::cubic_fit::FIT_PARAMS,
        }
    }

    /// The crates/cc algorithm this one must match.
    pub fn reference(self) -> &'static str {
        match self {
            Algo::Tuner => "tuner",
            Algo::CubicFit => "cubic-fit",
        }
    }

    /// The map value's fields in order, with their stored defaults.
    pub fn fields(self) -> &'static [(&'static str, u32)] {
        match self {
            Algo::Tuner => TUNER_FIELDS,
            Algo::CubicFit => FIT_FIELDS,
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
            Error::Param(format!(
                "{} has no parameter \"{name}\"; its parameters are: {}",
                self.name(),
                known.join(", ")
            ))
        })
    }

    /// The default map words.
    pub fn default_words(self) -> Vec<u32> {
        self.fields().iter().map(|f| f.1).collect()
    }

    /// Writes `value` (in user units, validated) for parameter `name` into `words`.
    pub fn put(self, words: &mut [u32], name: &str, value: f64) {
        if let Some(i) = self.fields().iter().position(|f| f.0 == name) {
            words[i] = to_fixed(name, value);
        }
    }

    /// The parameters (crates/cc names, user units) held in `words`.
    pub fn values(self, words: &[u32]) -> Vec<(&'static str, f64)> {
        self.params()
            .iter()
            .map(|p| {
                let i = self
                    .fields()
                    .iter()
                    .position(|f| f.0 == p.name)
                    .expect("every spec has a field");
                (p.name, from_fixed(p.name, words.get(i).copied().unwrap_or(0)))
            })
            .collect()
    }

    pub fn to_bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    pub fn from_bytes(bytes: &[u8]) -> Vec<u32> {
        bytes.chunks_exact(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect()
    }

    /// Validates `name=value` against the ParamSpec; returns the value as it will be
    /// stored (after fixed-point rounding).
    pub fn check(self, name: &str, value: f64) -> Result<f64, Error> {
        let spec = self.spec(name)?;
        let v = spec.check(self.name(), value).map_err(|e| Error::Param(e.to_string()))?;
        Ok(from_fixed(name, to_fixed(name, v)))
    }
}

/// User value -> map word: beta in 1/1024 and alpha in 1/512, rounded and kept in
/// [1, 1024] exactly as crates/cc's `Derived::of`; switches and integers as they are.
fn to_fixed(name: &str, v: f64) -> u32 {
    match name {
        "alpha" => ((v * 512.0).round() as u32).clamp(1, 1024),
        "beta" => ((v * 1024.0).round() as u32).clamp(1, 1024),
        _ => v.round() as u32,
    }
}

fn from_fixed(name: &str, w: u32) -> f64 {
    match name {
        "alpha" => w as f64 / 512.0,
        "beta" => w as f64 / 1024.0,
        _ => w as f64,
    }
}

/// Parses a value written as in scenario files: numbers, `true`/`false` for switches.
pub fn parse_value(spec: &ParamSpec, algo: &str, text: &str) -> Result<f64, Error> {
    let t = text.trim();
    let bad = || {
        Error::Param(format!(
            "{algo} parameter \"{}\" = \"{t}\" is not valid; allowed: {}",
            spec.name,
            spec.allowed()
        ))
    };
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
        let w = |i: usize| {
            b.get(4 * i..4 * i + 4).map(|s| u32::from_ne_bytes(s.try_into().unwrap())).unwrap_or(0)
        };
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
    fn defaults_are_crates_cc_defaults_in_linux_fixed_point() {
        for a in Algo::ALL {
            let w = a.default_words();
            for (name, v) in a.values(&w) {
                let spec = a.spec(name).unwrap();
                assert_eq!(
                    v,
                    from_fixed(name, to_fixed(name, spec.default)),
                    "{} {name}",
                    a.name()
                );
            }
        }
        assert_eq!(Algo::Tuner.default_words(), vec![512, 717, 1, 1, 1, 3, 16, 2000, 0, 41]);
    }

    #[test]
    fn range_errors_name_parameter_value_and_range() {
        let e = Algo::Tuner.check("beta", 1.5).unwrap_err().to_string();
        assert!(e.contains("\"beta\"") && e.contains("1.5") && e.contains("(0, 1]"), "{e}");
        let e = Algo::Tuner.check("alpha", 0.0).unwrap_err().to_string();
        assert!(e.contains("\"alpha\"") && e.contains("(0, 2]"), "{e}");
        let e = Algo::Tuner.check("gamma", 1.0).unwrap_err().to_string();
        assert!(e.contains("no parameter \"gamma\"") && e.contains("beta"), "{e}");
        assert_eq!(Algo::Tuner.check("beta", 0.5).unwrap(), 0.5);
        assert_eq!(Algo::Tuner.check("beta", 0.7).unwrap(), 717.0 / 1024.0);
    }

    #[test]
    fn switches_parse_as_in_scenario_files() {
        let s = Algo::Tuner.spec("fast_convergence").unwrap();
        assert_eq!(parse_value(s, "cclab_tuner", "false").unwrap(), 0.0);
        assert_eq!(parse_value(s, "cclab_tuner", "true").unwrap(), 1.0);
        assert!(parse_value(s, "cclab_tuner", "maybe").is_err());
    }
}
