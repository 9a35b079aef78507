//! Tunable parameters: each algorithm lists its parameters as [`ParamSpec`]s (name,
//! default, allowed range, unit, meaning) so that scenario files, the CLI, the kernel
//! tuner and the web UI validate values the same way and can show users what is allowed.

use std::fmt;

/// What kind of value a parameter takes. All values travel as `f64`; booleans are 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A real number.
    Float,
    /// A whole number.
    Int,
    /// A switch: `true`/`false` in files (1/0 on the wire).
    Bool,
}

/// One tunable parameter of an algorithm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The name used in scenario files, `--set`, the kernel tuner and the UI.
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: f64,
    /// Smallest allowed value (inclusive unless `min_exclusive`).
    pub min: f64,
    pub min_exclusive: bool,
    /// Largest allowed value (inclusive).
    pub max: f64,
    /// Unit, or "" for plain numbers and switches.
    pub unit: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
}

impl ParamSpec {
    /// A real-valued parameter in `[min, max]`.
    pub const fn float(
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
        unit: &'static str,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Float,
            default,
            min,
            min_exclusive: false,
            max,
            unit,
            doc,
        }
    }
    /// A real-valued parameter in `(min, max]` (TCPTuner's ranges for alpha and beta).
    pub const fn float_open_min(
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
        unit: &'static str,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Float,
            default,
            min,
            min_exclusive: true,
            max,
            unit,
            doc,
        }
    }
    /// A whole-number parameter in `[min, max]`.
    pub const fn int(
        name: &'static str,
        default: u64,
        min: u64,
        max: u64,
        unit: &'static str,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Int,
            default: default as f64,
            min: min as f64,
            min_exclusive: false,
            max: max as f64,
            unit,
            doc,
        }
    }
    /// An on/off switch.
    pub const fn switch(name: &'static str, default: bool, doc: &'static str) -> ParamSpec {
        let d = if default { 1.0 } else { 0.0 };
        ParamSpec {
            name,
            kind: ParamKind::Bool,
            default: d,
            min: 0.0,
            min_exclusive: false,
            max: 1.0,
            unit: "",
            doc,
        }
    }

    /// The allowed values in words, e.g. `(0, 2]`, `integer in [0, 255]`, `true or false`.
    pub fn allowed(&self) -> String {
        match self.kind {
            ParamKind::Bool => "true or false".to_string(),
            ParamKind::Int => format!("an integer in [{}, {}]", self.min, self.max),
            ParamKind::Float => {
                let open = if self.min_exclusive { '(' } else { '[' };
                format!("a number in {open}{}, {}]", self.min, self.max)
            }
        }
    }

    /// The value a command line writes as text: a number, or for a switch `true`/`false`
    /// in any case (also `on`/`off` and `yes`/`no`, as sysfs and `ip` take them). Not
    /// checked against the range ([`Self::check`] does that); `None` where the text is
    /// neither.
    pub fn parse_text(&self, text: &str) -> Option<f64> {
        let t = text.trim();
        if self.kind == ParamKind::Bool {
            match t.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" => return Some(1.0),
                "false" | "off" | "no" => return Some(0.0),
                _ => {}
            }
        }
        t.parse().ok()
    }

    /// Checks `value` against kind and range.
    pub fn check(&self, algorithm: &str, value: f64) -> Result<f64, ParamError> {
        let bad = || ParamError::OutOfRange {
            algorithm: algorithm.to_string(),
            name: self.name,
            value,
            allowed: self.allowed(),
        };
        if !value.is_finite() {
            return Err(bad());
        }
        let below = if self.min_exclusive { value <= self.min } else { value < self.min };
        if below || value > self.max {
            return Err(bad());
        }
        if self.kind == ParamKind::Bool && value.fract() != 0.0 {
            return Err(bad());
        }
        if self.kind == ParamKind::Int && value.fract() != 0.0 {
            return Err(ParamError::NotWhole {
                algorithm: algorithm.to_string(),
                name: self.name,
                value,
                allowed: self.allowed(),
            });
        }
        Ok(value)
    }
}

/// A parameter that does not exist or a value it does not accept.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamError {
    Unknown {
        algorithm: String,
        name: String,
        known: Vec<&'static str>,
    },
    OutOfRange {
        algorithm: String,
        name: &'static str,
        value: f64,
        allowed: String,
    },
    /// A fraction for a parameter that takes whole numbers (or a switch's 0 and 1).
    NotWhole {
        algorithm: String,
        name: &'static str,
        value: f64,
        allowed: String,
    },
}

impl ParamError {
    /// What is wrong with the value, without the parameter's name: "out of range for
    /// ALGORITHM; allowed: ..." or "not a whole number; allowed: ...".
    pub fn about_value(&self, who: &str) -> Option<String> {
        match self {
            ParamError::OutOfRange { allowed, .. } => {
                Some(format!("out of range for {who}; allowed: {allowed}"))
            }
            ParamError::NotWhole { allowed, .. } => {
                Some(format!("not a whole number; allowed: {allowed}"))
            }
            ParamError::Unknown { .. } => None,
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown { algorithm, name, known } if known.is_empty() => {
                write!(f, "algorithm \"{algorithm}\" has no parameter \"{name}\" (it has no tunable parameters)")
            }
            ParamError::Unknown { algorithm, name, known } => {
                write!(
                    f,
                    "algorithm \"{algorithm}\" has no parameter \"{name}\"; its parameters are: {}",
                    known.join(", ")
                )
            }
            ParamError::OutOfRange { algorithm, name, value, allowed } => {
                write!(f, "{algorithm} parameter \"{name}\" = {value} is out of range; allowed: {allowed}")
            }
            ParamError::NotWhole { algorithm, name, value, allowed } => {
                write!(f, "{algorithm} parameter \"{name}\" = {value} is not a whole number; allowed: {allowed}")
            }
        }
    }
}

impl std::error::Error for ParamError {}
