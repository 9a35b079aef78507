//! The tunables the two floating-point CUBIC variants share, `cubic-rfc9438` and
//! `cubic-2008`: the same four knobs, each variant with its own defaults and
//! `ParamSpec` texts (for example, `beta` is the factor kept in RFC 9438 and the fraction
//! removed in the 2008 paper).

/// beta, C and the two switches, as the variants' `Config`.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicKnobs {
    /// Multiplicative-decrease parameter (its meaning is the variant's own).
    pub beta: f64,
    /// C, the cubic's scale, segments/s^3.
    pub c: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
}

impl CubicKnobs {
    /// The given beta, C = 0.4 and both switches on (the defaults of both variants).
    pub const fn with_beta(beta: f64) -> CubicKnobs {
        CubicKnobs { beta, c: 0.4, fast_convergence: true, tcp_friendliness: true }
    }

    /// `CongestionControl::param` for these knobs (switches as 1/0).
    pub fn get(&self, name: &str) -> Option<f64> {
        let b = |x: bool| if x { 1.0 } else { 0.0 };
        Some(match name {
            "beta" => self.beta,
            "c" => self.c,
            "fast_convergence" => b(self.fast_convergence),
            "tcp_friendliness" => b(self.tcp_friendliness),
            _ => return None,
        })
    }

    /// `CongestionControl::apply_param` for these knobs (value already range-checked).
    pub fn set(&mut self, name: &str, value: f64) {
        match name {
            "beta" => self.beta = value,
            "c" => self.c = value,
            "fast_convergence" => self.fast_convergence = value != 0.0,
            "tcp_friendliness" => self.tcp_friendliness = value != 0.0,
            _ => {}
        }
    }
}
