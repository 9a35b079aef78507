//! The one error a scenario can produce: it names the file, the line (or the `--set`
//! override the value came from), the field path, the bad value and what is allowed.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file as the user named it (or `<built-in default>`).
    pub file: String,
    /// 1-based line of the offending key or value, when it came from the file.
    pub line: Option<usize>,
    /// The value came from a `--set` override rather than from the file.
    pub from_override: bool,
    /// Field path such as `flows[1].rtt` (empty for whole-file problems).
    pub field: String,
    /// The bad value as written, if there is one.
    pub value: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// The error as `cclab` prints it, a value from the command line marked "(--set)".
impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text_naming_overrides("--set"))
    }
}

impl ScenarioError {
    /// The error on one line, a value that came from an override marked with `overrides`,
    /// the caller's name for them (the Python package's is `Scenario.set`). Control
    /// characters from the input (a newline inside a quoted name, say) are shown escaped.
    pub fn text_naming_overrides(&self, overrides: &str) -> String {
        let mut text = String::new();
        let _ = self.write_to(&mut text, overrides);
        if text.chars().any(char::is_control) {
            let escape =
                |c: char| if c.is_control() { c.escape_default().to_string() } else { c.into() };
            text.chars().map(escape).collect()
        } else {
            text
        }
    }

    fn write_to(&self, f: &mut String, overrides: &str) -> fmt::Result {
        use fmt::Write;
        write!(f, "{}", self.file)?;
        match (self.line, self.from_override) {
            (_, true) => write!(f, " ({overrides})")?,
            (Some(l), false) => write!(f, ":{l}")?,
            (None, false) => {}
        }
        write!(f, ": ")?;
        match (&self.value, self.field.is_empty()) {
            (Some(v), false) => write!(f, "{} = {v}: ", self.field)?,
            (None, false) => write!(f, "{}: ", self.field)?,
            (Some(v), true) => write!(f, "{v}: ")?,
            (None, true) => {}
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}
