//! The written form of one direction of the emulated link, as `--uplink`/`--downlink`
//! take it: comma-separated `key=value` items, e.g.
//!
//! ```text
//! rate=20Mbps,delay=20ms,buffer=100pkt,loss=0.01
//! trace=/work/shared/traces/12mbps.trace,delay=40ms,buffer=120KB,qdisc=red,red_max_p=0.2
//! ```
//!
//! A bare first item is a rate if it parses as one (`20Mbps`), else a trace file path.
//! Keys: `rate`, `trace`, `delay` (one-way), `buffer` (`<n>pkt` or a size such as
//! `120KB`), `qdisc` (any of the simulator's queue disciplines that drop on arrival; see
//! [`crate::model::emulator_qdiscs`]) with its parameters as `<qdisc>_<parameter>` (the
//! scenario file's names, e.g. `red_min_th`, `pie_target`; giving one implies the
//! qdisc), `loss` (Bernoulli probability 0..1). Defaults and ranges are the simulator's.

use crate::model::emulator_qdiscs;
use crate::{DirectionConfig, EmuError};
use cclab_sim::qdisc::params::{Range, Value};
use cclab_sim::{Buffer, LinkRate, LossModel, Qdisc, Trace};
use cclab_units::{is_negative_figure, parse_bytes, parse_duration, parse_rate};
use std::path::Path;
use std::sync::Arc;

const KEYS: &str = "rate, trace, delay, buffer, qdisc, <qdisc>_<parameter>, loss";

/// Parses `spec` for the option `field` (e.g. "--uplink"); errors name the field, the
/// item, and what is allowed.
pub fn parse_direction(field: &str, spec: &str) -> Result<DirectionConfig, EmuError> {
    let bad = |key: &str, value: &str, allowed: &str| {
        EmuError::Config(format!("{field}: {key} \"{value}\" is not {allowed}"))
    };
    let mut cfg = DirectionConfig::default();
    // The qdisc named by `qdisc=`, and its parameters as given (in order).
    let mut qdisc: Option<Qdisc> = None;
    let mut qdisc_params: Vec<(&str, &str)> = Vec::new();
    // Keys given so far: each once, and the rate from `rate` or `trace`, not both.
    let mut given: Vec<&str> = Vec::new();
    for (i, item) in spec.split(',').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
        let bare = !item.contains('=');
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            // A negative figure is a rate, refused as such, not a file that cannot be read
            // (unless there is such a file).
            None if i == 0 => match parse_rate(item).is_ok()
                || (is_negative_figure(item) && !Path::new(item).exists())
            {
                true => ("rate", item),
                false => ("trace", item),
            },
            None => {
                return Err(EmuError::Config(format!(
                    "{field}: \"{item}\" is not key=value (keys: {KEYS})"
                )))
            }
        };
        let rate_keys = ["rate", "trace"];
        if let Some(earlier) = given
            .iter()
            .find(|&&k| k == key || (rate_keys.contains(&k) && rate_keys.contains(&key)))
        {
            return Err(EmuError::Config(if *earlier == key {
                format!("{field}: {key} is given twice (\"{item}\"); give each key once")
            } else {
                format!("{field}: {key} after {earlier}: give either rate or trace, not both")
            }));
        }
        given.push(key);
        match key {
            "rate" => {
                let r = parse_rate(value)
                    .map_err(|e| EmuError::Config(format!("{field}: rate {e}")))?;
                // The simulator's range, so that a link described for either is taken by both.
                let (min, max) = (cclab_sim::validate::MIN_RATE, cclab_sim::validate::MAX_RATE);
                if r < min || r > max {
                    return Err(bad("rate", value, &format!("in range; allowed: {min} to {max}")));
                }
                cfg.rate = Some(LinkRate::Constant(r));
            }
            "trace" => {
                let t = Trace::load(Path::new(value)).map_err(|e| {
                    EmuError::Config(if bare && !Path::new(value).exists() {
                        format!("{field}: \"{value}\" is neither a rate (such as 20Mbps) nor a trace file ({e})")
                    } else {
                        format!("{field}: {e}")
                    })
                })?;
                cfg.rate = Some(LinkRate::Trace(Arc::new(t)));
            }
            "delay" => {
                cfg.delay = parse_duration(value)
                    .map_err(|e| EmuError::Config(format!("{field}: delay {e}")))?;
                if cfg.delay.as_nanos() > 10_000_000_000 {
                    return Err(bad("delay", value, "at most 10s"));
                }
            }
            "buffer" => cfg.buffer = parse_buffer(field, value)?,
            "qdisc" => {
                qdisc = Some(
                    Qdisc::named(value)
                        .filter(|q| !q.drops_at_dequeue())
                        .ok_or_else(|| bad("qdisc", value, &emulator_qdiscs_text()))?,
                );
            }
            _ if qdisc_param(key).is_some() => qdisc_params.push((key, value)),
            "loss" => {
                let p: f64 = value
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=1.0).contains(p))
                    .ok_or_else(|| bad("loss", value, "a probability between 0 and 1"))?;
                cfg.loss = if p == 0.0 { LossModel::None } else { LossModel::Bernoulli { p } };
            }
            _ => {
                return Err(EmuError::Config(format!(
                    "{field}: unknown key \"{key}\" (keys: {KEYS})"
                )))
            }
        }
    }
    if let Some(q) = with_params(field, qdisc, &qdisc_params)? {
        cfg.qdisc = q;
    }
    check_red_reaches(field, &cfg)?;
    Ok(cfg)
}

/// The smallest packet the emulator may queue: an IPv4 header alone (it forwards any IP
/// packet its TUN device gives it). A buffer in bytes is counted in these, so that only a
/// RED that could never drop early whatever the traffic is refused.
const SMALLEST_PACKET: u64 = 20;

/// RED must be able to drop early in the buffer given (the simulator's rule,
/// [`cclab_sim::validate::red_never_drops_early`]).
fn check_red_reaches(field: &str, cfg: &DirectionConfig) -> Result<(), EmuError> {
    let Qdisc::Red(red) = &cfg.qdisc else { return Ok(()) };
    let (most, buffer) = match cfg.buffer {
        Buffer::Packets(n) => (n, format!("buffer = {n}pkt")),
        Buffer::Bytes(b) => {
            let most = b / SMALLEST_PACKET;
            (most, format!("buffer = {b} bytes, at most {most} packets of {SMALLEST_PACKET} bytes"))
        }
    };
    match cclab_sim::validate::red_never_drops_early(red.min_th, "red_min_th", most, &buffer) {
        None => Ok(()),
        Some(why) => {
            Err(EmuError::Config(format!("{field}: red_min_th \"{}\": {why}", red.min_th)))
        }
    }
}

/// `<n>pkt` or a size of at least one packet.
fn parse_buffer(field: &str, value: &str) -> Result<Buffer, EmuError> {
    let bad =
        |allowed: &str| EmuError::Config(format!("{field}: buffer \"{value}\" is not {allowed}"));
    if let Some(n) = value.strip_suffix("pkt") {
        return match n.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Buffer::Packets(n)),
            _ => Err(bad("a positive packet count such as \"100pkt\" or a size such as \"120KB\"")),
        };
    }
    match parse_bytes(value) {
        Ok(b) if b >= 1500 => Ok(Buffer::Bytes(b)),
        Ok(_) => Err(bad("at least 1500B (one packet)")),
        Err(e) => Err(EmuError::Config(format!(
            "{field}: buffer {e}, or a packet count such as \"100pkt\""
        ))),
    }
}

/// "one of: droptail, red, pie".
fn emulator_qdiscs_text() -> String {
    format!("one of: {}", emulator_qdiscs().join(", "))
}

/// The qdisc and parameter a `<qdisc>_<parameter>` key names (`red_max_p`), if it is one.
fn qdisc_param(key: &str) -> Option<(Qdisc, &str)> {
    emulator_qdiscs().into_iter().find_map(|name| {
        let param = key.strip_prefix(name)?.strip_prefix('_')?;
        let q = Qdisc::named(name)?;
        q.param(param).is_some().then_some((q, param))
    })
}

/// The qdisc of a direction: the one `qdisc=` named (else the one its parameters name,
/// else none), with the parameters set and its rules checked. Errors name the key, the
/// value and what is allowed.
fn with_params(
    field: &str,
    named: Option<Qdisc>,
    params: &[(&str, &str)],
) -> Result<Option<Qdisc>, EmuError> {
    let mut q = named;
    for &(key, value) in params {
        let Some((implied, param)) = qdisc_param(key) else { continue };
        let q = q.get_or_insert_with(|| implied.clone());
        if q.name() != implied.name() {
            return Err(EmuError::Config(format!(
                "{field}: {key} is a parameter of qdisc {}, not of the qdisc given ({})",
                implied.name(),
                q.name()
            )));
        }
        let Some(info) = q.param(param) else { continue };
        let v = match info.range {
            Range::Number { .. } => value.parse().ok().map(Value::Number),
            Range::Time { .. } => parse_duration(value).ok().map(Value::Time),
            Range::Switch => value.parse().ok().map(Value::Switch),
        };
        let v = v.ok_or_else(|| {
            EmuError::Config(format!("{field}: {key} \"{value}\" is not {}", info.range.allowed()))
        })?;
        q.set(param, v)
            .map_err(|m| EmuError::Config(format!("{field}: {key} \"{value}\": {m}")))?;
    }
    if let Some(q) = &q {
        q.check().map_err(|e| {
            EmuError::Config(format!(
                "{field}: {}_{} \"{}\": {}",
                q.name(),
                e.field,
                e.value,
                e.message
            ))
        })?;
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_units::{Duration, Rate};

    #[test]
    fn parses_rate_delay_buffer_loss() {
        let c = parse_direction("--uplink", "20Mbps,delay=20ms,buffer=100pkt,loss=0.01").unwrap();
        assert!(matches!(c.rate, Some(LinkRate::Constant(r)) if r == Rate::from_mbps(20)));
        assert_eq!(c.delay, Duration::from_millis(20));
        assert_eq!(c.buffer, Buffer::Packets(100));
        assert_eq!(c.loss, LossModel::Bernoulli { p: 0.01 });
        let c = parse_direction("--downlink", "rate=1Gbps,buffer=120KB,qdisc=red,red_max_p=0.2")
            .unwrap();
        assert_eq!(c.buffer, Buffer::Bytes(120_000));
        assert!(matches!(c.qdisc, Qdisc::Red(ref r) if r.max_p == 0.2 && r.min_th == 5.0));
        // Any parameter of the simulator's table, by the scenario file's name.
        let c = parse_direction("--uplink", "10Mbps,pie_target=20ms,pie_alpha=0.25").unwrap();
        let want = cclab_sim::PieConfig {
            target: Duration::from_millis(20),
            alpha: 0.25,
            ..Default::default()
        };
        assert_eq!(c.qdisc, Qdisc::Pie(want));
    }

    #[test]
    fn reads_a_shared_trace_verbatim() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/12mbps.trace");
        if !Path::new(path).exists() {
            cclab_units::errln!("skipped: {path} not present");
            return;
        }
        let c = parse_direction("--uplink", &format!("{path},delay=5ms")).unwrap();
        let Some(LinkRate::Trace(t)) = c.rate else { panic!("expected a trace") };
        assert!(t.period_ms > 0 && !t.opportunities_ms.is_empty());
    }

    #[test]
    fn errors_name_the_field_value_and_what_is_allowed() {
        let msg = |s: &str| parse_direction("--uplink", s).unwrap_err().to_string();
        let m = msg("trace=/nonexistent/x.trace");
        assert!(m.contains("--uplink") && m.contains("/nonexistent/x.trace"), "{m}");
        let m = msg("/no/such/file");
        assert!(m.contains("cannot read trace file /no/such/file"), "{m}");
        let m = msg("10mbit");
        assert!(
            m.contains("\"10mbit\" is neither a rate (such as 20Mbps) nor a trace file"),
            "{m}"
        );
        let m = msg("-5Mbps,delay=10ms");
        assert!(m.contains("rate \"-5Mbps\" is not a rate, which is never negative"), "{m}");
        let m = msg("rate=1Mbps,trace=/work/shared/traces/12mbps.trace");
        assert!(m.contains("trace after rate: give either rate or trace, not both"), "{m}");
        // The simulator's range of rates (`1bps` was taken).
        let m = msg("1bps");
        assert!(m.contains("rate \"1bps\" is not in range; allowed: 1Kbps to 1000Gbps"), "{m}");
        // RED that could never drop early: ns-2's min_th of 5 packets in a buffer of 6.
        let m = msg("10Mbps,buffer=6pkt,qdisc=red");
        assert!(
            m.contains("--uplink: red_min_th \"5\": RED would never drop early: in buffer = 6pkt"),
            "{m}"
        );
        assert!(m.contains("allowed: red_min_th below 5 packets, or a larger buffer"), "{m}");
        let m = msg("10Mbps,buffer=2pkt,qdisc=red,red_min_th=0");
        assert!(m.contains("allowed: a buffer of at least 3 packets"), "{m}");
        // Counted in the smallest packets, a buffer in bytes refuses only what no traffic
        // could reach: 1500 bytes hold 75 bare IPv4 headers.
        let ok = "10Mbps,buffer=1500B,qdisc=red,red_min_th=73,red_max_th=80";
        assert!(parse_direction("--uplink", ok).is_ok());
        let m = msg("10Mbps,buffer=1500B,qdisc=red,red_min_th=74,red_max_th=80");
        assert!(m.contains("in buffer = 1500 bytes, at most 75 packets of 20 bytes"), "{m}");
        assert!(parse_direction("--uplink", "10Mbps,buffer=7pkt,qdisc=red").is_ok());
        let m = msg("10Mbps,delay=5ms,delay=10ms");
        assert!(m.contains("delay is given twice (\"delay=10ms\")"), "{m}");
        let m = msg("rate=10MBps");
        assert!(m.contains("--uplink: rate") && m.contains("Mbps"), "{m}");
        let m = msg("10Mbps,delay=soon");
        assert!(m.contains("delay") && m.contains("soon"), "{m}");
        let m = msg("10Mbps,buffer=0pkt");
        assert!(m.contains("buffer \"0pkt\""), "{m}");
        let m = msg("10Mbps,loss=1.5");
        assert!(m.contains("loss \"1.5\"") && m.contains("between 0 and 1"), "{m}");
        let m = msg("10Mbps,qdisc=codel");
        assert!(m.contains("qdisc \"codel\" is not one of: droptail, red, pie"), "{m}");
        let m = msg("10Mbps,colour=red");
        assert!(m.contains("unknown key \"colour\""), "{m}");
        let m = msg("10Mbps,red_min_th=20,red_max_th=10");
        assert!(m.contains("red_max_th \"10\": must be greater than min_th = 20"), "{m}");
        let m = msg("10Mbps,red_max_p=1.5");
        assert!(m.contains("red_max_p \"1.5\": out of range; allowed: a number in (0, 1]"), "{m}");
        let m = msg("10Mbps,qdisc=pie,red_max_p=0.2");
        assert!(
            m.contains("red_max_p is a parameter of qdisc red, not of the qdisc given (pie)"),
            "{m}"
        );
        let m = msg("rate=0Mbps");
        assert!(m.contains("rate \"0Mbps\" is not in range"), "{m}");
    }
}
