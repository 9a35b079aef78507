//! Parsers for the written forms of units. Errors say what was written and what is allowed,
//! so callers (scenario files, CLI flags, the web API) only add the field name.

use crate::{Duration, Rate};
use std::fmt;

/// A value that is not a well-formed quantity of the expected kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub value: String,
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" is not {}", self.value, self.expected)
    }
}

impl std::error::Error for UnitError {}

const DURATION_FORM: &str = "a duration such as \"20ms\" (units: ns, us, ms, s)";
const RATE_FORM: &str = "a rate such as \"10Mbps\" (units: bps, Kbps, Mbps, Gbps)";
const BYTES_FORM: &str = "a size such as \"10MB\" (units: B, KB, MB, GB)";

/// Splits `"12.5ms"` into (12.5, "ms"); rejects negative, non-finite and unit-less numbers.
fn split<'a>(s: &'a str, expected: &'static str) -> Result<(f64, &'a str), UnitError> {
    let err = || UnitError { value: s.to_string(), expected };
    let t = s.trim();
    let at = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(err)?;
    let (num, unit) = t.split_at(at);
    if num.is_empty() {
        return Err(err());
    }
    let n: f64 = num.parse().map_err(|_| err())?;
    if !n.is_finite() || n < 0.0 {
        return Err(err());
    }
    Ok((n, unit.trim()))
}

/// Multiplies and checks that the result is a whole number of base units within u64.
fn scale(n: f64, mult: f64, s: &str, expected: &'static str) -> Result<u64, UnitError> {
    let v = (n * mult).round();
    if v > u64::MAX as f64 / 2.0 {
        return Err(UnitError { value: s.to_string(), expected });
    }
    Ok(v as u64)
}

pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let (n, unit) = split(s, DURATION_FORM)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(UnitError { value: s.to_string(), expected: DURATION_FORM }),
    };
    scale(n, mult, s, DURATION_FORM).map(Duration)
}

pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let (n, unit) = split(s, RATE_FORM)?;
    let mult = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        _ => return Err(UnitError { value: s.to_string(), expected: RATE_FORM }),
    };
    scale(n, mult, s, RATE_FORM).map(Rate)
}

pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let (n, unit) = split(s, BYTES_FORM)?;
    let mult = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => return Err(UnitError { value: s.to_string(), expected: BYTES_FORM }),
    };
    scale(n, mult, s, BYTES_FORM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_scenario_files_use() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("20ms").unwrap(), Duration::from_millis(20));
        assert_eq!(parse_duration("1.5ms").unwrap(), Duration::from_micros(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_rate("10Mbps").unwrap(), Rate::from_mbps(10));
        assert_eq!(parse_rate("1Gbps").unwrap(), Rate(1_000_000_000));
        assert_eq!(parse_rate("64Kbps").unwrap(), Rate(64_000));
        assert_eq!(parse_bytes("10MB").unwrap(), 10_000_000);
        assert_eq!(parse_bytes("120KB").unwrap(), 120_000);
        assert_eq!(parse_bytes("1500B").unwrap(), 1500);
    }

    #[test]
    fn rejects_bad_forms_with_what_is_allowed() {
        for bad in ["", "ms", "-5ms", "5", "5 minutes", "5hours", "1e3ms", "nan", "5..5ms"] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("units: ns, us, ms, s"), "{e}");
        }
        assert!(parse_rate("10MBps").unwrap_err().to_string().contains("Mbps"));
        assert!(parse_bytes("10Mb").is_err());
        assert!(parse_bytes("99999999999999999999GB").is_err());
    }
}
