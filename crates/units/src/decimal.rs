//! Number text appended to a byte buffer without `format!`: the writers of the time
//! series (hundreds of thousands of rows), the plots and the JSON files go through here.
//! The text is ASCII, so a buffer of it converts to a `String` without checking.
//!
//! Every function writes exactly the bytes of the `format!` form it names. The float
//! forms take an exact integer path whenever the answer is certain and hand the rare
//! doubtful case (a value within rounding error of a half, a huge value, many
//! decimals, NaN or infinity) to the standard library, which rounds the exact binary
//! value; the tests compare both paths on millions of values.

use std::io::Write as _;

/// Decimals the integer path handles: 10^9 times any value it takes stays below 2^53.
const MAX_FAST_DECIMALS: usize = 9;
/// Powers of ten, exact as both `u64` and `f64`.
const POW10: [u64; MAX_FAST_DECIMALS + 1] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];
/// 2^52: below it a double's fractional part is exact and meaningful.
const TWO_POW_52: f64 = 4_503_599_627_370_496.0;

/// "00", "01", ... "99": two digits per division by 100 halve the divisions (and the
/// stores) a number's digits take, as integer printers commonly do.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// Writes the two digits of `v` (below 100) to end just before `buf[end]`.
fn two_digits(buf: &mut [u8], end: usize, v: u64) {
    let at = v as usize * 2;
    buf[end - 2..end].copy_from_slice(&DIGIT_PAIRS[at..at + 2]);
}

/// Writes the lowest `count` decimal digits of `v`, zero-padded, to end just before
/// `buf[end]`. Returns where they start and `v` without them.
fn low_digits(buf: &mut [u8], end: usize, mut v: u64, count: usize) -> (usize, u64) {
    let mut start = end;
    while start > end - count + 1 {
        two_digits(buf, start, v % 100);
        v /= 100;
        start -= 2;
    }
    if start > end - count {
        buf[start - 1] = b'0' + (v % 10) as u8;
        v /= 10;
        start -= 1;
    }
    (start, v)
}

/// Writes all of `v`'s decimal digits (at least one) to end just before `buf[end]`.
/// Returns where they start.
fn all_digits(buf: &mut [u8], mut end: usize, mut v: u64) -> usize {
    while v >= 100 {
        two_digits(buf, end, v % 100);
        v /= 100;
        end -= 2;
    }
    if v >= 10 {
        two_digits(buf, end, v);
        end - 2
    } else {
        buf[end - 1] = b'0' + v as u8;
        end - 1
    }
}

/// Appends `v` as `format!("{v}")` would.
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let end = buf.len();
    let start = all_digits(&mut buf, end, v);
    out.extend_from_slice(&buf[start..]);
}

/// Appends `v` as `format!("{v}")` would.
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends `frac` as exactly `digits` digits, zero-padded on the left.
fn push_padded(out: &mut Vec<u8>, frac: u64, digits: usize) {
    let mut buf = [0u8; MAX_FAST_DECIMALS];
    low_digits(&mut buf, digits, frac, digits);
    out.extend_from_slice(&buf[..digits]);
}

/// `|x|` times 10^`decimals`, rounded to the nearest integer, when that rounding is
/// certain. The product carries at most half an ulp of error, so rounding it gives the
/// exact value's rounding unless its fractional part lies within that error of one half.
/// (Truncating casts instead of `fract` and `round`, which are library calls on x86-64.)
fn scaled(x: f64, decimals: usize) -> Option<u64> {
    if decimals > MAX_FAST_DECIMALS || !x.is_finite() {
        return None;
    }
    let p = x.abs() * POW10[decimals] as f64;
    if p >= TWO_POW_52 {
        return None;
    }
    // Both conversions exact, p being below 2^52; through i64, which x86-64 converts
    // in one instruction each way (u64 takes several).
    let whole = p as i64;
    let fract = p - whole as f64;
    let whole = whole as u64;
    let error = p * f64::EPSILON; // ulp(p) <= p * 2^-52, twice the bound
    if (fract - 0.5).abs() <= error {
        return None;
    }
    Some(if fract > 0.5 { whole + 1 } else { whole })
}

/// Appends `x` as `format!("{x:.decimals$}")` would (sign of a negative zero kept).
pub fn push_fixed(out: &mut Vec<u8>, x: f64, decimals: usize) {
    let Some(m) = scaled(x, decimals) else {
        let _ = write!(out, "{x:.decimals$}");
        return;
    };
    // Written right to left into one buffer and appended once: the plots write a
    // hundred thousand coordinates, and one short copy per number costs less than
    // three. Room: a sign, 16 digits (m < 2^53), a point and MAX_FAST_DECIMALS decimals.
    let mut buf = [0u8; 1 + 16 + 1 + MAX_FAST_DECIMALS];
    let end = buf.len();
    let (mut start, whole) = low_digits(&mut buf, end, m, decimals);
    if decimals > 0 {
        start -= 1;
        buf[start] = b'.';
    }
    start = all_digits(&mut buf, start, whole);
    if x.is_sign_negative() {
        start -= 1;
        buf[start] = b'-';
    }
    out.extend_from_slice(&buf[start..end]);
}

/// Appends [`crate::json::num`]`(x, decimals)`: `x` with at most `decimals` decimals,
/// trailing zeros and a trailing point removed, `0` for a negative zero, `null` when not
/// finite.
pub fn push_num(out: &mut Vec<u8>, x: f64, decimals: usize) {
    if !x.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    // Integral values (most of the cc_* columns) skip the scaling.
    let int = x as i64;
    if int as f64 == x && int.unsigned_abs() < 1 << 53 {
        push_i64(out, int);
        return;
    }
    let Some(m) = scaled(x, decimals) else {
        let start = out.len();
        let _ = write!(out, "{x:.decimals$}");
        trim_fraction(out, start);
        return;
    };
    if m == 0 {
        out.push(b'0');
        return;
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    push_trimmed(out, m, POW10[decimals], decimals);
}

/// Trims trailing zeros and a trailing point off the number written from `start`, and
/// writes a negative zero as `0`.
fn trim_fraction(out: &mut Vec<u8>, start: usize) {
    if out[start..].contains(&b'.') {
        while out.last() == Some(&b'0') {
            out.pop();
        }
        if out.last() == Some(&b'.') {
            out.pop();
        }
    }
    if &out[start..] == b"-0" {
        out.truncate(start);
        out.push(b'0');
    }
}

/// Appends integer nanoseconds as exact decimal seconds ("0.01", "12.5", "3").
pub fn push_secs(out: &mut Vec<u8>, ns: u64) {
    push_trimmed(out, ns, 1_000_000_000, 9);
}

/// Appends integer nanoseconds as milliseconds with microsecond precision ("100.25").
pub fn push_millis(out: &mut Vec<u8>, ns: u64) {
    push_trimmed(out, ns / 1_000, 1_000, 3);
}

/// `v / scale` with its remainder as up to `digits` decimals, trailing zeros trimmed.
fn push_trimmed(out: &mut Vec<u8>, v: u64, scale: u64, digits: usize) {
    push_u64(out, v / scale);
    let mut frac = v % scale;
    if frac != 0 {
        let mut digits = digits;
        while frac.is_multiple_of(10) {
            frac /= 10;
            digits -= 1;
        }
        out.push(b'.');
        push_padded(out, frac, digits);
    }
}

/// The text of a buffer these functions wrote (ASCII, so always valid UTF-8).
pub fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (SplitMix64) for the comparisons below.
    struct Mix(u64);
    impl Mix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    fn num_by_format(x: f64, decimals: usize) -> String {
        if !x.is_finite() {
            return "null".to_string();
        }
        let s = format!("{x:.decimals$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    }

    fn check(x: f64) {
        for d in 0..=12 {
            // After other text, as the plots append one coordinate after another.
            let mut fixed = b"7,".to_vec();
            push_fixed(&mut fixed, x, d);
            assert_eq!(text(fixed), format!("7,{x:.d$}"), "push_fixed({x:e}, {d})");
            let mut num = Vec::new();
            push_num(&mut num, x, d);
            assert_eq!(text(num), num_by_format(x, d), "push_num({x:e}, {d})");
        }
    }

    /// Values of the kinds the results hold (integral, decimal fractions, RTTs in ms,
    /// ratios) and the edges (halves, negative zero, huge, tiny, not finite).
    #[test]
    fn floats_are_written_as_format_writes_them() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.05,
            0.25,
            0.125,
            1e-7,
            -1e-7,
            0.0000005,
            0.0000015,
            123.4565,
            2147483647.0,
            -4503599627370496.0,
            9007199254740992.0,
            9223372036854775808.0,
            -9223372036854775808.0,
            4503599627370495.5,
            9007199254740993.0,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        edges.into_iter().for_each(check);
        let mut r = Mix(1);
        for _ in 0..200_000 {
            let bits = r.next();
            let x = match bits % 6 {
                0 => f64::from_bits(r.next()),
                1 => (r.next() % 1_000_000_000) as f64 / 1e6,
                2 => (r.next() % 100_000) as f64 / 1e3 + 0.0005,
                3 => (r.next() % (1 << 40)) as f64 * 0.5,
                4 => (r.next() as f64 / u64::MAX as f64 - 0.5) * 1e4,
                _ => -((r.next() % 10_000_000) as f64) / 1e7,
            };
            check(x);
        }
    }

    #[test]
    fn integers_and_times_are_written_as_format_writes_them() {
        let mut r = Mix(2);
        for i in 0..100_000u64 {
            let v = if i < 1000 { i } else { r.next() >> (r.next() % 64) };
            let mut s = Vec::new();
            push_u64(&mut s, v);
            assert_eq!(s, v.to_string().as_bytes());
            s.clear();
            push_i64(&mut s, v as i64);
            assert_eq!(s, (v as i64).to_string().as_bytes());
        }
        let mut s = Vec::new();
        push_u64(&mut s, u64::MAX);
        push_i64(&mut s, i64::MIN);
        assert_eq!(text(s), format!("{}{}", u64::MAX, i64::MIN));
        let cases = [(10_000_000, "0.01", "10"), (3_000_000_000, "3", "3000")];
        for (ns, secs, millis) in cases {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            push_secs(&mut a, ns);
            push_millis(&mut b, ns);
            assert_eq!((text(a), text(b)), (secs.to_string(), millis.to_string()));
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        push_secs(&mut a, 12_500_000_001);
        push_millis(&mut b, 100_250_999);
        assert_eq!((text(a), text(b)), ("12.500000001".to_string(), "100.25".to_string()));
    }
}
