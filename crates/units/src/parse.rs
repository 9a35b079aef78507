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

impl UnitError {
    /// Whether the value was written in the unit's form but is still refused (a fraction
    /// of a byte, a value too large), rather than not written as such a quantity at all.
    pub fn is_in_form(&self) -> bool {
        ![DURATION.form, RATE.form, BYTES.form].contains(&self.expected)
    }
}

/// What a kind of quantity looks like, and what the errors say of it.
struct Form {
    /// The written form, for a value that is not one.
    form: &'static str,
    /// For a value beyond what the simulator counts.
    too_large: &'static str,
    /// For a value written as a negative quantity ("-40ms").
    negative: &'static str,
    /// Each unit's size as a power of ten of the base unit (ns, bit/s, byte).
    units: &'static [(&'static str, u32)],
}

/// The written form of each kind of quantity, as errors name it (also for a value of
/// the wrong type in a scenario file). Units are case-sensitive ("mbps" would read as
/// millibits), so the two spellings of kilo that are taken are both listed.
pub const DURATION_FORM: &str = "a duration such as \"20ms\" (units: ns, us, ms, s)";
pub const RATE_FORM: &str = "a rate such as \"10Mbps\" (units: bps, Kbps or kbps, Mbps, Gbps)";
pub const SIZE_FORM: &str = "a size such as \"10MB\" (units: B, KB or kB, MB, GB)";

const DURATION: Form = Form {
    form: DURATION_FORM,
    too_large: "a duration of at most about 292 years",
    negative: "a duration, which is never negative",
    units: &[("ns", 0), ("us", 3), ("ms", 6), ("s", 9)],
};
const RATE: Form = Form {
    form: RATE_FORM,
    too_large: "a rate of at most about 9.2e18 bps",
    negative: "a rate, which is never negative",
    units: &[("bps", 0), ("Kbps", 3), ("kbps", 3), ("Mbps", 6), ("Gbps", 9)],
};
const BYTES: Form = Form {
    form: SIZE_FORM,
    too_large: "a size of at most about 9.2e18 bytes",
    negative: "a size, which is never negative",
    units: &[("B", 0), ("KB", 3), ("kB", 3), ("MB", 6), ("GB", 9)],
};
/// A byte count cannot fall between two bytes ("1.5B").
const WHOLE_BYTES: &str = "a whole number of bytes";
/// Nor be written with an exponent, which would round it ("1.001e0MB").
const BYTES_WITHOUT_EXPONENT: &str = "a size written without an exponent, such as \"1.5MB\"";
/// The largest count of base units accepted (half of u64, so sums stay in range).
const MAX_UNITS: u64 = u64::MAX / 2;

fn error(s: &str, expected: &'static str) -> UnitError {
    UnitError { value: s.to_string(), expected }
}

/// Where the number at the start of `t` ends: digits and points, then an exponent (`e`
/// or `E`, a sign, digits) if one follows; no unit begins with an `e`.
fn number_end(t: &str) -> usize {
    let b = t.as_bytes();
    let digits_from = |mut i: usize, point: bool| {
        while i < b.len() && (b[i].is_ascii_digit() || (point && b[i] == b'.')) {
            i += 1;
        }
        i
    };
    let mantissa = digits_from(0, true);
    if mantissa < b.len() && matches!(b[mantissa], b'e' | b'E') {
        let sign = mantissa + 1 + usize::from(matches!(b.get(mantissa + 1), Some(b'+' | b'-')));
        let end = digits_from(sign, false);
        if end > sign {
            return end;
        }
    }
    mantissa
}

/// Whether `s` is written as a negative figure ("-5Mbps", "-.5s"), whatever its unit: a
/// command line takes such a value for an option, and a bare link spec for a file name.
pub fn is_negative_figure(s: &str) -> bool {
    let figure = |r: &str| r.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    s.trim().strip_prefix('-').is_some_and(figure)
}

/// Splits `"12.5ms"` into ("12.5", 12.5, 6: the unit's power of ten); rejects unsigned,
/// unit-less numbers and units `form` does not have. The number may have an exponent
/// ("1e3Mbps", "2.5e-3s", as a program prints a float); one too large for a float is
/// refused as too large.
fn split<'a>(s: &'a str, form: &Form) -> Result<(&'a str, f64, u32), UnitError> {
    let err = || error(s, form.form);
    let t = s.trim();
    // "-40ms" is refused for its sign, which the form's example would not say.
    if let Some(unsigned) = t.strip_prefix('-') {
        return Err(match split(unsigned, form) {
            Ok(_) => error(s, form.negative),
            Err(_) => err(),
        });
    }
    let (num, unit) = t.split_at(number_end(t));
    if num.is_empty() {
        return Err(err());
    }
    let n: f64 = num.parse().map_err(|_| err())?;
    if n.is_infinite() {
        return Err(error(s, form.too_large));
    }
    let &(_, exponent) = form.units.iter().find(|(u, _)| *u == unit.trim()).ok_or_else(err)?;
    Ok((num, n, exponent))
}

/// `n` units of 10^`exponent` base units, rounded to a whole number of base units (1 ns,
/// 1 bit/s), so that computed values ("33.333333333333336ms") are taken as meant.
fn scale(n: f64, exponent: u32, s: &str, form: &Form) -> Result<u64, UnitError> {
    let v = (n * 10f64.powi(exponent as i32)).round();
    if v > MAX_UNITS as f64 {
        return Err(error(s, form.too_large));
    }
    Ok(v as u64)
}

/// The decimal `num` ("1.5", digits and at most one point, as `split` checked) times
/// 10^`decimals`, exactly: a count of bytes is refused, not rounded, when it would fall
/// between two, however small the fraction ("1000000.5B").
fn exact_count(num: &str, decimals: usize, s: &str) -> Result<u64, UnitError> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let frac = frac.trim_end_matches('0');
    if frac.len() > decimals {
        return Err(error(s, WHOLE_BYTES));
    }
    let digits = format!("{int}{frac:0<decimals$}");
    let digits = digits.trim_start_matches('0');
    match digits.parse::<u64>() {
        _ if digits.is_empty() => Ok(0),
        Ok(v) if v <= MAX_UNITS => Ok(v),
        _ => Err(error(s, BYTES.too_large)),
    }
}

pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let (_, n, exponent) = split(s, &DURATION)?;
    scale(n, exponent, s, &DURATION).map(Duration)
}

pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let (_, n, exponent) = split(s, &RATE)?;
    scale(n, exponent, s, &RATE).map(Rate)
}

pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let (num, _, exponent) = split(s, &BYTES)?;
    // Counted exactly, from the digits: a float's exponent would round them.
    if num.contains(['e', 'E']) {
        return Err(error(s, BYTES_WITHOUT_EXPONENT));
    }
    exact_count(num, exponent as usize, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_may_have_an_exponent() {
        assert_eq!(parse_rate("1e3Mbps").unwrap(), Rate(1_000_000_000));
        assert_eq!(parse_duration("2.5e-3s").unwrap(), Duration::from_micros(2500));
        assert_eq!(parse_duration("1.e3s").unwrap(), Duration::from_secs(1000));
        assert_eq!(parse_duration("5e-400s").unwrap(), Duration(0));
        assert_eq!(parse_bytes("1.5E3B").unwrap_err().expected, BYTES_WITHOUT_EXPONENT);
        assert_eq!(parse_rate("1e12Gbps").unwrap_err().expected, RATE.too_large);
        assert_eq!(parse_rate("1e400Mbps").unwrap_err().expected, RATE.too_large);
        assert_eq!(parse_duration("1e30s").unwrap_err().expected, DURATION.too_large);
        // No sign but the exponent's; an exponent needs its digits.
        for bad in ["+5ms", "1e3", "e3s", "1es", "1e+s", "1e3e3s", "infs", ".e3s", "-ms", "--5ms"] {
            assert_eq!(parse_duration(bad).unwrap_err().expected, DURATION.form, "{bad}");
        }
        // A quantity with a minus is refused for its sign (student review, 2026-12-06:
        // "-40ms" was told only that it is not a duration such as "20ms").
        for bad in ["-1e3s", "-0ms", "-5ms", " -40ms"] {
            assert_eq!(parse_duration(bad).unwrap_err().expected, DURATION.negative, "{bad}");
        }
        assert_eq!(parse_bytes("-0B").unwrap_err().expected, BYTES.negative);
        let e = parse_rate("-5Mbps").unwrap_err();
        assert_eq!(e.to_string(), "\"-5Mbps\" is not a rate, which is never negative");
    }

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
        for bad in ["", "ms", "5", "5 minutes", "5hours", "1e3", "nan", "5..5ms"] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("units: ns, us, ms, s"), "{e}");
        }
        assert!(parse_rate("10MBps").unwrap_err().to_string().contains("Mbps"));
        assert!(parse_bytes("10Mb").is_err());
        let huge = parse_bytes("99999999999999999999GB").unwrap_err();
        assert!(huge.to_string().contains("at most about 9.2e18 bytes"), "{huge}");
    }

    /// A byte count is whole: "1.5B" is refused, not rounded to 2 bytes, while a decimal
    /// fraction of a larger unit that binary floating point cannot hold exactly is the
    /// whole number it names. Durations and rates round to 1 ns and 1 bit/s.
    #[test]
    fn fractional_bytes_are_refused_and_times_and_rates_rounded() {
        assert_eq!(
            parse_bytes("1.5B").unwrap_err().to_string(),
            "\"1.5B\" is not a whole number of bytes"
        );
        for fraction in ["1500.5B", "1000000.5B", "1.0000005MB", "1.0000001B", "0.0000000001KB"] {
            assert!(
                parse_bytes(fraction).unwrap_err().to_string().contains("whole number"),
                "{fraction}"
            );
        }
        assert_eq!(parse_bytes("123456789.123KB").unwrap(), 123_456_789_123);
        assert_eq!(parse_bytes(".5KB").unwrap(), 500);
        assert_eq!(parse_bytes("1.50000KB").unwrap(), 1500);
        assert_eq!(parse_bytes("0B").unwrap(), 0);
        assert!(parse_bytes("9300000000GB").unwrap_err().to_string().contains("at most"));
        assert_eq!(parse_bytes("1.1KB").unwrap(), 1100);
        assert_eq!(parse_bytes("0.0015MB").unwrap(), 1500);
        assert_eq!(parse_duration("33.333333333333336ms").unwrap(), Duration(33_333_333));
        assert_eq!(parse_duration("0.3ms").unwrap(), Duration::from_micros(300));
        assert_eq!(parse_rate("1.5bps").unwrap(), Rate(2));
        assert_eq!(parse_rate("2.4Gbps").unwrap(), Rate(2_400_000_000));
    }
}
