//! The simulator's one error type: a bad configuration or a bad live change.

use std::fmt;

/// Why a configuration or a parameter change was refused: the offending setting
/// (`field`, e.g. `flows[3].rtt`, `bottleneck.buffer`), its value as the simulator shows
/// it, and what is wrong or allowed. Each part of a configuration checks itself and names
/// its own fields (`rtt`); [`within`](SimError::within) adds the path to the part, so a
/// scenario file can point at the line that wrote the value instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub field: String,
    /// Empty when no single value is at fault.
    pub value: String,
    pub message: String,
}

impl SimError {
    pub fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        message: impl Into<String>,
    ) -> SimError {
        SimError { field: field.into(), value: value.into(), message: message.into() }
    }

    /// The same error seen from the enclosing part: `rtt` in `flows[3]` is `flows[3].rtt`.
    pub fn within(mut self, part: &str) -> SimError {
        self.field =
            if self.field.is_empty() { part.to_string() } else { format!("{part}.{}", self.field) };
        self
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.field, self.message)
        } else {
            write!(f, "{} = {}: {}", self.field, self.value, self.message)
        }
    }
}

impl std::error::Error for SimError {}
