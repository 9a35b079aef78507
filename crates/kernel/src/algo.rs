//! The algorithms this crate loads into the kernel, their tunables and the fixed-point
//! layout of the maps that hold them (`bpf/cclab_params.h`).
//!
//! Parameter names, defaults, ranges and fixed points come from crates/cc's description of
//! CUBIC's tunables ([`cclab_cc::cubic_config::TUNABLES`]), so `cclab kernel set` refuses
//! exactly what a scenario file would, and the map layout is derived from it: the C
//! structs must list the same fields in the same order with the same defaults, which the
//! tests below check against the header and the C code compiled for the host. Values are
//! written to the map in the units Linux and TCPTuner use: beta in 1/1024, alpha in 1/512
//! (both rounded to nearest), switches as 0/1, N in 1/1024.

use crate::error::Error;
use cclab_cc::cubic::N_ONE;
use cclab_cc::cubic_config::{CubicTunable, InFit, TUNABLES};
use cclab_cc::cubic_fit::{N_MAX, UPDATE_INTERVAL_US};
use cclab_cc::{ParamKind, ParamSpec};

/// One `__u32` of a parameter map.
#[derive(Clone, Copy, Debug)]
pub enum Field {
    /// A CUBIC tunable, stored in its fixed point.
    Tunable(&'static CubicTunable),
    /// A constant of the algorithm that users cannot set.
    Constant { name: &'static str, value: u32 },
}

impl Field {
    pub fn name(&self) -> &'static str {
        match self {
            Field::Tunable(t) => t.spec.name,
            Field::Constant { name, .. } => name,
        }
    }

    /// The word stored before anyone changes it.
    pub fn default_word(&self) -> u32 {
        match self {
            Field::Tunable(t) => t.to_fixed(t.spec.default),
            Field::Constant { value, .. } => *value,
        }
    }
}

/// `struct cclab_tuner_params`: every CUBIC tunable, in crates/cc's order.
fn tuner_fields() -> Vec<Field> {
    TUNABLES.iter().map(Field::Tunable).collect()
}

/// `struct cclab_fit_params`: the CUBIC tunables CUBIC-FIT takes from its configuration
/// (not alpha, which it does not have, nor beta, which it derives from N per flow), then
/// the period of the N update (the paper's 500 ms) and the cap on N (crates/cc's 1000
/// flows, in 1/1024). Only those crates/cc lists in `cubic_fit::FIT_PARAMS` can be set;
/// the rest keep their defaults.
fn fit_fields() -> Vec<Field> {
    let tunables = TUNABLES.iter().filter(|t| t.in_fit != InFit::NotConfig).map(Field::Tunable);
    tunables
        .chain([
            Field::Constant { name: "update_interval_us", value: UPDATE_INTERVAL_US as u32 },
            Field::Constant { name: "n_max", value: N_MAX * N_ONE },
        ])
        .collect()
}

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

    /// The map value's fields, in order.
    pub fn fields(self) -> Vec<Field> {
        match self {
            Algo::Tuner => tuner_fields(),
            Algo::CubicFit => fit_fields(),
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
        self.fields().iter().map(Field::default_word).collect()
    }

    /// The word index and description of tunable `name` in the map.
    fn tunable_field(self, name: &str) -> Option<(usize, &'static CubicTunable)> {
        self.fields().into_iter().enumerate().find_map(|(i, f)| match f {
            Field::Tunable(t) if t.spec.name == name => Some((i, t)),
            _ => None,
        })
    }

    /// Writes `value` (in user units, validated) for parameter `name` into `words`.
    pub fn put(self, words: &mut [u32], name: &str, value: f64) {
        if let Some((i, t)) = self.tunable_field(name) {
            words[i] = t.to_fixed(value);
        }
    }

    /// The parameters (crates/cc names, user units) held in `words`.
    pub fn values(self, words: &[u32]) -> Vec<(&'static str, f64)> {
        self.params()
            .iter()
            .map(|p| {
                let (i, t) = self.tunable_field(p.name).expect("every parameter has a field");
                (p.name, t.from_fixed(words.get(i).copied().unwrap_or(0)))
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
        let (_, t) = self.tunable_field(spec.name).expect("every parameter has a field");
        Ok(t.from_fixed(t.to_fixed(v)))
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
    spec.parse_text(t).ok_or_else(bad)
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
            for (name, v) in a.values(&a.default_words()) {
                let spec = a.spec(name).unwrap();
                assert!((v - spec.default).abs() <= 0.5 / 1024.0, "{} {name}", a.name());
            }
        }
        // alpha, fast_convergence, beta, initial_ssthresh, bic_scale, tcp_friendliness,
        // hystart, hystart_detect, hystart_low_window, hystart_ack_delta_us
        assert_eq!(Algo::Tuner.default_words(), vec![512, 1, 717, 0, 41, 1, 1, 3, 16, 2000]);
    }

    /// The fields of a C struct in bpf/cclab_params.h, in order.
    fn c_fields(header: &str, name: &str) -> Vec<String> {
        let start = header.find(&format!("struct {name} {{")).expect("struct in header");
        let body = &header[start..start + header[start..].find("};").expect("end of struct")];
        body.lines()
            .filter_map(|l| l.trim().strip_prefix("__u32 "))
            .map(|l| l.split(';').next().unwrap().trim().to_string())
            .collect()
    }

    /// bpf/cclab_params.h and the C defaults (cclab_tuner.bpf.c, cclab_cubic_fit.bpf.c,
    /// compiled for the host) hold the fields derived from crates/cc, in the same order,
    /// with the same defaults.
    #[test]
    fn c_structs_and_defaults_match_crates_cc() {
        let header = include_str!("../bpf/cclab_params.h");
        for (a, c_struct) in
            [(Algo::Tuner, "cclab_tuner_params"), (Algo::CubicFit, "cclab_fit_params")]
        {
            let names: Vec<_> = a.fields().iter().map(|f| f.name()).collect();
            assert_eq!(c_fields(header, c_struct), names, "{c_struct}");
            assert_eq!(crate::host::c_defaults(a), a.default_words(), "{} defaults", a.name());
        }
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
        assert_eq!(parse_value(s, "cclab_tuner", "TRUE").unwrap(), 1.0, "in any case");
        assert!(parse_value(s, "cclab_tuner", "maybe").is_err());
    }
}
