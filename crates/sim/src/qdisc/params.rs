//! How a queue discipline describes its parameters, once, for everyone who reads or
//! checks them: scenario files (`qdisc = { kind = "red", max_p = 0.2 }`), the emulator's
//! link descriptions (`qdisc=red,red_max_p=0.2`) and the simulator's own validation.
//! Each discipline lists its parameters in one table ([`Param`]: name, range, meaning,
//! where the value lives in its configuration) and states its rules across parameters
//! ([`Settings::check_together`]); nothing else names them.

use crate::error::SimError;
use cclab_units::Duration;
use std::fmt;

/// A parameter's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Time(Duration),
    Switch(bool),
}

impl Value {
    /// The number (for the tables' setters, which only see values their range admitted;
    /// NaN otherwise).
    pub fn number(self) -> f64 {
        if let Value::Number(x) = self {
            x
        } else {
            f64::NAN
        }
    }
    /// The duration (zero for another kind of value; see [`number`](Self::number)).
    pub fn time(self) -> Duration {
        if let Value::Time(d) = self {
            d
        } else {
            Duration::ZERO
        }
    }
    /// The switch (false for another kind of value; see [`number`](Self::number)).
    pub fn switch(self) -> bool {
        matches!(self, Value::Switch(true))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(x) => write!(f, "{x}"),
            Value::Time(d) => write!(f, "{d}"),
            Value::Switch(b) => write!(f, "{b}"),
        }
    }
}

/// The values a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// A number in `[min, max]`, or `(min, max]` when `min_open`.
    Number { min: f64, min_open: bool, max: f64 },
    /// A duration in `[min, max]`.
    Time { min: Duration, max: Duration },
    /// On or off.
    Switch,
}

/// The range of every queue-discipline duration: a microsecond to 100 seconds.
pub const TIME: Range =
    Range::Time { min: Duration::from_micros(1), max: Duration::from_secs(100) };

impl Range {
    /// What is allowed, as error messages say it: "a number in (0, 1]", "1us to 100s".
    pub fn allowed(&self) -> String {
        match *self {
            Range::Number { min, min_open, max } => {
                format!("a number in {}{min}, {max}]", if min_open { '(' } else { '[' })
            }
            Range::Time { min, max } => format!("{min} to {max}"),
            Range::Switch => "true or false".to_string(),
        }
    }

    /// Whether `v` is of this range's kind and within it.
    pub fn admits(&self, v: Value) -> bool {
        match (*self, v) {
            (Range::Number { min, min_open, max }, Value::Number(x)) => {
                let above_min = if min_open { x > min } else { x >= min };
                x.is_finite() && above_min && x <= max
            }
            (Range::Time { min, max }, Value::Time(d)) => min <= d && d <= max,
            (Range::Switch, Value::Switch(_)) => true,
            _ => false,
        }
    }
}

/// One parameter of a discipline whose configuration is `C`.
pub struct Param<C> {
    /// The name in scenario files (`max_p`); the emulator writes it after the
    /// discipline's name (`red_max_p`).
    pub name: &'static str,
    pub range: Range,
    /// One line: what it does, with its unit.
    pub meaning: &'static str,
    pub get: fn(&C) -> Value,
    /// Only called with a value the range admits.
    pub set: fn(&mut C, Value),
}

/// What a reader needs to know about a parameter, whatever the discipline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: &'static str,
    pub range: Range,
    pub meaning: &'static str,
}

/// A discipline's configuration: its parameter table and its rules across parameters.
/// Defaults are the type's `Default`.
pub trait Settings: Default + 'static {
    const PARAMS: &'static [Param<Self>];

    /// Rules that involve more than one parameter (each one's own range is in the table);
    /// the error's field is the parameter to change.
    fn check_together(&self) -> Result<(), SimError> {
        Ok(())
    }
}

/// [`Settings`] without its type, so that [`super::Qdisc`] can hand out any discipline's.
pub(super) trait AnySettings {
    fn infos(&self) -> Vec<ParamInfo>;
    fn get(&self, name: &str) -> Option<Value>;
    /// Sets a known parameter to a value its range admits; the error says what is allowed.
    fn set(&mut self, name: &str, v: Value) -> Result<(), String>;
    /// Every parameter within its range, then the rules across parameters.
    fn check(&self) -> Result<(), SimError>;
}

impl<C: Settings> AnySettings for C {
    fn infos(&self) -> Vec<ParamInfo> {
        C::PARAMS
            .iter()
            .map(|p| ParamInfo { name: p.name, range: p.range, meaning: p.meaning })
            .collect()
    }

    fn get(&self, name: &str) -> Option<Value> {
        C::PARAMS.iter().find(|p| p.name == name).map(|p| (p.get)(self))
    }

    fn set(&mut self, name: &str, v: Value) -> Result<(), String> {
        let Some(p) = C::PARAMS.iter().find(|p| p.name == name) else {
            return Err(format!("no parameter \"{name}\""));
        };
        if !p.range.admits(v) {
            return Err(format!("out of range; allowed: {}", p.range.allowed()));
        }
        (p.set)(self, v);
        Ok(())
    }

    fn check(&self) -> Result<(), SimError> {
        for p in C::PARAMS {
            let v = (p.get)(self);
            if !p.range.admits(v) {
                return Err(SimError::new(
                    p.name,
                    v.to_string(),
                    format!("out of range; allowed: {}", p.range.allowed()),
                ));
            }
        }
        self.check_together()
    }
}
