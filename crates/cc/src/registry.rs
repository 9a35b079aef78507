//! The enum over every built-in algorithm: one dispatch style on the hot path (a `match`,
//! no virtual calls, no allocation), and the table of names, sources and parameters that
//! the CLI, scenario files and the web UI use.
//!
//! To add an algorithm: write `src/<name>.rs` with a type implementing
//! [`CongestionControl`] and [`Default`] (built with its default `Config`) plus a
//! `pub const INFO: AlgorithmInfo`, declare the module in `lib.rs`, and add one line to
//! the `algorithms!` list below.

use crate::{
    AckFlags, AckSample, CaEvent, CaState, CongestionControl, LossRecovery, ParamError, ParamSpec,
    RateSample, TcpState,
};
use std::fmt;

/// Describes an algorithm for listings and validation.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmInfo {
    /// The name used in scenario files (`cc = "cubic"`).
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// What it follows: paper, RFC or Linux file.
    pub source: &'static str,
    pub params: &'static [ParamSpec],
}

/// A name that is not a built-in algorithm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm {
    pub name: String,
}

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = ALGORITHMS.iter().map(|a| a.name).collect();
        write!(f, "unknown algorithm \"{}\"; known algorithms: {}", self.name, names.join(", "))
    }
}

impl std::error::Error for UnknownAlgorithm {}

/// How a variant stores its algorithm: by value, or as written after `as` (a `Box`).
macro_rules! storage {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, $store:ty) => {
        $store
    };
}

macro_rules! algorithms {
    ($($variant:ident($ty:ty $(as $store:ty)?),)+) => {
        /// Any built-in algorithm, by value; the few much larger than CUBIC are boxed, so
        /// that the enum (one per flow) is the size of CUBIC.
        #[derive(Clone, Debug)]
        pub enum Algorithm {
            $($variant(storage!($ty $(, $store)?)),)+
        }

        /// Every built-in algorithm, in listing order.
        pub const ALGORITHMS: &[AlgorithmInfo] = &[$(<$ty>::INFO,)+];

        impl Algorithm {
            /// The algorithm called `name`, with its default parameters.
            pub fn new(name: &str) -> Result<Algorithm, UnknownAlgorithm> {
                $(if name == <$ty>::INFO.name {
                    return Ok(Algorithm::$variant(<$ty>::default().into()));
                })+
                Err(UnknownAlgorithm { name: name.to_string() })
            }

            pub fn info(&self) -> &'static AlgorithmInfo {
                match self {
                    $(Algorithm::$variant(_) => &<$ty>::INFO,)+
                }
            }

            fn inner(&self) -> &dyn CongestionControl {
                match self {
                    $(Algorithm::$variant(a) => {
                        <storage!($ty $(, $store)?) as std::borrow::Borrow<$ty>>::borrow(a)
                    })+
                }
            }
        }

        impl CongestionControl for Algorithm {
            fn init(&mut self, tp: &mut TcpState) {
                match self { $(Algorithm::$variant(a) => a.init(tp),)+ }
            }
            fn ssthresh(&mut self, tp: &TcpState) -> u32 {
                match self { $(Algorithm::$variant(a) => a.ssthresh(tp),)+ }
            }
            fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
                match self { $(Algorithm::$variant(a) => a.cong_avoid(tp, acked),)+ }
            }
            fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
                match self { $(Algorithm::$variant(a) => a.set_state(tp, new_state),)+ }
            }
            fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
                match self { $(Algorithm::$variant(a) => a.cwnd_event(tp, event),)+ }
            }
            fn in_ack_event(&mut self, tp: &mut TcpState, flags: AckFlags) {
                match self { $(Algorithm::$variant(a) => a.in_ack_event(tp, flags),)+ }
            }
            fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
                match self { $(Algorithm::$variant(a) => a.pkts_acked(tp, sample),)+ }
            }
            fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
                match self { $(Algorithm::$variant(a) => a.undo_cwnd(tp),)+ }
            }
            fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) -> bool {
                match self { $(Algorithm::$variant(a) => a.cong_control(tp, rs),)+ }
            }
            fn loss_recovery(&self) -> LossRecovery {
                self.inner().loss_recovery()
            }
            fn params(&self) -> &'static [ParamSpec] {
                self.info().params
            }
            fn param(&self, name: &str) -> Option<f64> {
                self.inner().param(name)
            }
            fn apply_param(&mut self, name: &str, value: f64) {
                match self { $(Algorithm::$variant(a) => a.apply_param(name, value),)+ }
            }
            fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
                self.inner().inspect(report)
            }
        }
    };
}

algorithms! {
    Reno(crate::reno::Reno),
    NewReno(crate::newreno::NewReno),
    Tahoe(crate::tahoe::Tahoe),
    Cubic(crate::cubic::Cubic),
    Tuner(crate::tuner::Tuner),
    CubicRfc9438(crate::cubic_rfc9438::CubicRfc9438),
    Cubic2008(crate::cubic_2008::Cubic2008),
    CubicFit(crate::cubic_fit::CubicFit as Box<crate::cubic_fit::CubicFit>),
    Bic(crate::bic::Bic),
    HighSpeed(crate::highspeed::HighSpeed),
    Htcp(crate::htcp::Htcp),
    Scalable(crate::scalable::Scalable),
    Vegas(crate::vegas::Vegas),
    Westwood(crate::westwood::Westwood),
    Illinois(crate::illinois::Illinois),
    Veno(crate::veno::Veno),
    Hybla(crate::hybla::Hybla),
    Compound(crate::compound::Compound),
    TcpFit(crate::tcp_fit::TcpFit),
}

impl Algorithm {
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// The specification of parameter `name`, or an error listing the known ones.
    pub fn spec(&self, name: &str) -> Result<&'static ParamSpec, ParamError> {
        spec_of(self.info(), name)
    }

    /// Validates and applies a parameter change; safe on a running flow.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), ParamError> {
        let spec = self.spec(name)?;
        let value = spec.check(self.name(), value)?;
        self.apply_param(spec.name, value);
        Ok(())
    }
}

/// Looks up a parameter of an algorithm by name (for validating before a run starts).
pub fn spec_of(info: &'static AlgorithmInfo, name: &str) -> Result<&'static ParamSpec, ParamError> {
    info.params.iter().find(|p| p.name == name).ok_or_else(|| ParamError::Unknown {
        algorithm: info.name.to_string(),
        name: name.to_string(),
        known: info.params.iter().map(|p| p.name).collect(),
    })
}

/// The description of the algorithm called `name`.
pub fn info_of(name: &str) -> Result<&'static AlgorithmInfo, UnknownAlgorithm> {
    ALGORITHMS
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| UnknownAlgorithm { name: name.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_builds_and_reports_its_own_info() {
        for info in ALGORITHMS {
            let a = Algorithm::new(info.name).unwrap();
            assert_eq!(a.name(), info.name);
            for p in info.params {
                assert!(
                    p.check(info.name, p.default).is_ok(),
                    "{}.{} default outside its range",
                    info.name,
                    p.name
                );
                assert_eq!(
                    a.param(p.name),
                    Some(p.default),
                    "{}.{} starts at its default",
                    info.name,
                    p.name
                );
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = ALGORITHMS.iter().map(|a| a.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALGORITHMS.len());
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = Algorithm::new("cubik").unwrap_err().to_string();
        assert!(e.contains("\"cubik\"") && e.contains("reno"), "{e}");
        let mut reno = Algorithm::new("reno").unwrap();
        let e = reno.set_param("beta", 0.5).unwrap_err().to_string();
        assert!(e.contains("no parameter \"beta\""), "{e}");
    }
}
