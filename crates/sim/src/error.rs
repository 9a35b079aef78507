//! The simulator's one error type: a bad configuration or a bad live change.

use std::fmt;

/// Why a configuration or a parameter change was refused. `field` names the offending
/// setting (e.g. `flows[3].rtt`, `bottleneck.buffer`); `message` says what was given and
/// what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub field: String,
    pub message: String,
}

impl SimError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SimError {}
