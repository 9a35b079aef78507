//! The configuration of Linux CUBIC and its two relatives built on [`CubicCore`] (`cubic`,
//! `tuner`, `cubic-fit`): tcp_cubic.c's module parameters, same names and defaults, plus
//! TCPTuner's alpha.
//!
//! Each tunable is described once, in [`TUNABLES`]: its [`ParamSpec`] (name, default,
//! range, unit, meaning), where it lives in [`CubicConfig`], which algorithms let users
//! set it, and the fixed point Linux stores it in. Everything else derives from that
//! table: the three parameter lists ([`crate::cubic::CUBIC_PARAMS`],
//! [`crate::tuner::TUNER_PARAMS`], [`crate::cubic_fit::FIT_PARAMS`]), `param()` and
//! `apply_param()`, and the layout of the kernel crate's parameter maps (which checks its
//! C header against this table).
//!
//! [`CubicCore`]: crate::cubic::CubicCore

use crate::cubic::{ALPHA_SCALE, BETA_SCALE, HYSTART_ACK_TRAIN, HYSTART_DELAY};
use crate::params::ParamSpec;

/// The tunables; [`TUNABLES`] says what each means, its unit and its range.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    pub fast_convergence: bool,
    /// The multiplicative factor kept (0.7); Linux holds it in 1/1024ths (717).
    pub beta: f64,
    pub initial_ssthresh: u32,
    pub bic_scale: u32,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u32,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
    /// TCPTuner's W_max multiplier; 1 for `cubic` and `cubic-fit`.
    pub alpha: f64,
}

impl CubicConfig {
    /// tcp_cubic.c's defaults, and alpha = 1 (no TCPTuner scaling).
    pub const DEFAULT: CubicConfig = CubicConfig {
        fast_convergence: true,
        beta: 0.7,
        initial_ssthresh: 0,
        bic_scale: 41,
        tcp_friendliness: true,
        hystart: true,
        hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
        hystart_low_window: 16,
        hystart_ack_delta_us: 2000,
        alpha: 1.0,
    };
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig::DEFAULT
    }
}

/// What CUBIC-FIT does with a tunable of the CUBIC framework it runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFit {
    /// Users may set it.
    Settable,
    /// Held at its default: C is part of CUBIC-FIT's Eq. 5, and the paper leaves HyStart's
    /// tuning and the initial ssthresh as Linux has them.
    Default,
    /// Not taken from the configuration: CUBIC-FIT has no TCPTuner alpha, and its beta is
    /// 1 - b(N), per flow.
    NotConfig,
}

/// The algorithms built on [`crate::cubic::CubicCore`], which differ in the tunables they
/// let users set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Cubic,
    Tuner,
    CubicFit,
}

/// One tunable, described once.
#[derive(Clone, Copy, Debug)]
pub struct CubicTunable {
    pub spec: ParamSpec,
    /// `cubic` lets users set it (every tunable but TCPTuner's alpha; `tuner` sets all).
    pub in_cubic: bool,
    pub in_fit: InFit,
    /// Linux and TCPTuner store the value in 1/`fixed_point`ths (beta 1024, alpha 512);
    /// 1: a whole number or switch, stored as it is.
    pub fixed_point: u32,
    pub get: fn(&CubicConfig) -> f64,
    /// Sets the field from a value already checked against `spec`.
    pub set: fn(&mut CubicConfig, f64),
}

impl CubicTunable {
    /// Whether `variant` lets users set this tunable.
    pub const fn settable_in(&self, variant: Variant) -> bool {
        match variant {
            Variant::Cubic => self.in_cubic,
            Variant::Tuner => true,
            Variant::CubicFit => matches!(self.in_fit, InFit::Settable),
        }
    }

    /// The value as Linux stores it (see [`fixed_point`]).
    pub fn to_fixed(&self, value: f64) -> u32 {
        if self.fixed_point == 1 {
            value.round() as u32
        } else {
            fixed_point(value, self.fixed_point, (self.spec.max * self.fixed_point as f64) as u32)
        }
    }

    /// The value a stored word stands for.
    pub fn from_fixed(&self, word: u32) -> f64 {
        word as f64 / self.fixed_point as f64
    }
}

/// `value` in 1/`scale`ths, rounded to nearest and kept in [1, `max`]: how Linux holds
/// beta (`BICTCP_BETA_SCALE`) and TCPTuner alpha; never 0, which would zero the window.
pub fn fixed_point(value: f64, scale: u32, max: u32) -> u32 {
    ((value * scale as f64).round() as u32).clamp(1, max)
}

fn flag(on: bool) -> f64 {
    if on {
        1.0
    } else {
        0.0
    }
}

const D: CubicConfig = CubicConfig::DEFAULT;

/// Every tunable, TCPTuner's alpha first, then tcp_cubic.c's in the order it declares
/// them. The parameter lists keep this order.
pub const TUNABLES: &[CubicTunable] = &[
    CubicTunable {
        spec: ParamSpec::float_open_min(
            "alpha",
            D.alpha,
            0.0,
            2.0,
            "",
            "W_max multiplier at each loss (TCPTuner's alpha/512)",
        ),
        in_cubic: false,
        in_fit: InFit::NotConfig,
        fixed_point: ALPHA_SCALE,
        get: |c| c.alpha,
        set: |c, v| c.alpha = v,
    },
    CubicTunable {
        spec: ParamSpec::switch(
            "fast_convergence",
            D.fast_convergence,
            "lower W_max further when a loss comes before the last W_max",
        ),
        in_cubic: true,
        in_fit: InFit::Settable,
        fixed_point: 1,
        get: |c| flag(c.fast_convergence),
        set: |c, v| c.fast_convergence = v != 0.0,
    },
    CubicTunable {
        spec: ParamSpec::float_open_min(
            "beta",
            D.beta,
            0.0,
            1.0,
            "",
            "multiplicative decrease factor: cwnd -> beta * cwnd (kernel: 717/1024)",
        ),
        in_cubic: true,
        in_fit: InFit::NotConfig,
        fixed_point: BETA_SCALE,
        get: |c| c.beta,
        set: |c, v| c.beta = v,
    },
    CubicTunable {
        spec: ParamSpec::int(
            "initial_ssthresh",
            D.initial_ssthresh as u64,
            0,
            0x7fff_ffff,
            "packets",
            "initial slow-start threshold, 0 = none; used only with hystart off",
        ),
        in_cubic: true,
        in_fit: InFit::Default,
        fixed_point: 1,
        get: |c| c.initial_ssthresh as f64,
        set: |c, v| c.initial_ssthresh = v as u32,
    },
    CubicTunable {
        spec: ParamSpec::int(
            "bic_scale",
            D.bic_scale as u64,
            1,
            1024,
            "",
            "C = bic_scale x 10 / 1024 (41: C = 0.40), as tcp_cubic.c scales it to a 100 ms RTT",
        ),
        in_cubic: true,
        in_fit: InFit::Default,
        fixed_point: 1,
        get: |c| c.bic_scale as f64,
        set: |c, v| c.bic_scale = v as u32,
    },
    CubicTunable {
        spec: ParamSpec::switch(
            "tcp_friendliness",
            D.tcp_friendliness,
            "never grow slower than the Reno estimate",
        ),
        in_cubic: true,
        in_fit: InFit::Settable,
        fixed_point: 1,
        get: |c| flag(c.tcp_friendliness),
        set: |c, v| c.tcp_friendliness = v != 0.0,
    },
    CubicTunable {
        spec: ParamSpec::switch(
            "hystart",
            D.hystart,
            "hybrid slow start (leave slow start before the first loss)",
        ),
        in_cubic: true,
        in_fit: InFit::Settable,
        fixed_point: 1,
        get: |c| flag(c.hystart),
        set: |c, v| c.hystart = v != 0.0,
    },
    CubicTunable {
        spec: ParamSpec::int(
            "hystart_detect",
            D.hystart_detect as u64,
            0,
            3,
            "",
            "HyStart detectors: 1 ACK train, 2 delay increase, 3 both",
        ),
        in_cubic: true,
        in_fit: InFit::Default,
        fixed_point: 1,
        get: |c| c.hystart_detect as f64,
        set: |c, v| c.hystart_detect = v as u32,
    },
    CubicTunable {
        spec: ParamSpec::int(
            "hystart_low_window",
            D.hystart_low_window as u64,
            0,
            1_000_000,
            "packets",
            "HyStart acts only when cwnd is at least this",
        ),
        in_cubic: true,
        in_fit: InFit::Default,
        fixed_point: 1,
        get: |c| c.hystart_low_window as f64,
        set: |c, v| c.hystart_low_window = v as u32,
    },
    CubicTunable {
        spec: ParamSpec::int(
            "hystart_ack_delta_us",
            D.hystart_ack_delta_us as u64,
            0,
            1_000_000,
            "us",
            "ACKs closer than this count as one train",
        ),
        in_cubic: true,
        in_fit: InFit::Default,
        fixed_point: 1,
        get: |c| c.hystart_ack_delta_us as f64,
        set: |c, v| c.hystart_ack_delta_us = v as u32,
    },
];

/// The tunable called `name`.
pub fn tunable(name: &str) -> Option<&'static CubicTunable> {
    TUNABLES.iter().find(|t| t.spec.name == name)
}

/// How many tunables `variant` lets users set.
pub const fn settable_count(variant: Variant) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < TUNABLES.len() {
        if TUNABLES[i].settable_in(variant) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The specs of the tunables `variant` lets users set, in table order; `N` must be
/// [`settable_count`] (the crate's `params_of!(variant)` passes both).
pub const fn settable_specs<const N: usize>(variant: Variant) -> [ParamSpec; N] {
    let mut out = [TUNABLES[0].spec; N];
    let (mut i, mut n) = (0, 0);
    while i < TUNABLES.len() {
        if TUNABLES[i].settable_in(variant) {
            out[n] = TUNABLES[i].spec;
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "N must be settable_count(variant)");
    out
}

/// The parameter list of a [`Variant`], as a `&'static [ParamSpec]` built at compile time.
macro_rules! params_of {
    ($variant:expr) => {
        &$crate::cubic_config::settable_specs::<{ $crate::cubic_config::settable_count($variant) }>(
            $variant,
        )
    };
}
pub(crate) use params_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tunable_reads_its_default_from_the_default_config() {
        for t in TUNABLES {
            assert_eq!((t.get)(&CubicConfig::default()), t.spec.default, "{}", t.spec.name);
        }
    }

    /// Setting one tunable changes exactly one value: no two rows share a field, and `get`
    /// reads what `set` wrote.
    #[test]
    fn get_and_set_touch_one_field_each() {
        for t in TUNABLES {
            let mut cfg = CubicConfig::default();
            let other = if t.spec.default == t.spec.max { t.spec.max - 1.0 } else { t.spec.max };
            (t.set)(&mut cfg, other);
            assert_eq!((t.get)(&cfg), other, "{}", t.spec.name);
            for u in TUNABLES.iter().filter(|u| u.spec.name != t.spec.name) {
                assert_eq!(
                    (u.get)(&cfg),
                    u.spec.default,
                    "setting {} moved {}",
                    t.spec.name,
                    u.spec.name
                );
            }
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, t) in TUNABLES.iter().enumerate() {
            assert!(
                TUNABLES[i + 1..].iter().all(|u| u.spec.name != t.spec.name),
                "{}",
                t.spec.name
            );
        }
    }

    #[test]
    fn fixed_point_is_linuxs() {
        let beta = tunable("beta").unwrap();
        assert_eq!(beta.to_fixed(0.7), 717);
        assert_eq!(beta.to_fixed(1.0), 1024);
        assert_eq!(beta.to_fixed(1e-6), 1, "never 0");
        assert_eq!(beta.from_fixed(512), 0.5);
        let alpha = tunable("alpha").unwrap();
        assert_eq!(alpha.to_fixed(1.0), 512);
        assert_eq!(alpha.to_fixed(2.0), 1024);
        assert_eq!(tunable("hystart_ack_delta_us").unwrap().to_fixed(2000.0), 2000);
    }

    /// What the kernel maps store (`to_fixed`) is what the Rust reference computes with.
    #[test]
    fn to_fixed_agrees_with_the_derived_constants() {
        let (beta, alpha) = (tunable("beta").unwrap(), tunable("alpha").unwrap());
        for i in 1..=2000 {
            let v = i as f64 / 1000.0;
            let cfg = CubicConfig { beta: v.min(1.0), alpha: v, ..CubicConfig::default() };
            let d = crate::cubic::Derived::of(&cfg);
            assert_eq!(beta.to_fixed(cfg.beta), d.beta, "beta {}", cfg.beta);
            assert_eq!(alpha.to_fixed(cfg.alpha), d.alpha, "alpha {v}");
        }
    }

    #[test]
    fn each_algorithm_lists_what_it_lets_users_set() {
        let names = |list: &[ParamSpec]| list.iter().map(|p| p.name).collect::<Vec<_>>();
        let all = names(&TUNABLES.iter().map(|t| t.spec).collect::<Vec<_>>());
        assert_eq!(names(crate::tuner::TUNER_PARAMS), all);
        assert_eq!(names(crate::cubic::CUBIC_PARAMS), all[1..], "all but alpha");
        assert_eq!(
            names(crate::cubic_fit::FIT_PARAMS),
            ["fast_convergence", "tcp_friendliness", "hystart"]
        );
    }
}
