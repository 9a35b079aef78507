//! The written form of one direction of the emulated link, as `--uplink`/`--downlink`
//! take it: comma-separated `key=value` items, e.g.
//!
//! ```text
//! rate=20Mbps,delay=20ms,buffer=100pkt,loss=0.01
//! trace=/work/shared/traces/12mbps.trace,delay=40ms,buffer=120KB,qdisc=red
//! ```
//!
//! A bare first item is a rate if it parses as one (`20Mbps`), else a trace file path.
//! Keys: `rate`, `trace`, `delay` (one-way), `buffer` (`<n>pkt` or a size such as
//! `120KB`), `qdisc` (`droptail` | `red` | `pie`), `red_min_th`, `red_max_th` (packets),
//! `red_max_p`, `red_weight`, `loss` (Bernoulli probability 0..1).

use crate::{DirectionConfig, EmuError};
use cclab_sim::{Buffer, LinkRate, LossModel, PieConfig, Qdisc, RedConfig, Trace};
use cclab_units::Duration;
use cclab_units::{parse_bytes, parse_duration, parse_rate};
use std::path::Path;
use std::sync::Arc;

/// RED defaults as ns-2 commonly configures them in the seeds' fairness study (packets).
pub fn red_defaults() -> RedConfig {
    RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.002, gentle: true }
}

/// PIE defaults of RFC 8033 section 4 (target 15 ms, update every 15 ms, alpha 1/8, beta 1.25).
pub fn pie_defaults() -> PieConfig {
    PieConfig {
        target: Duration::from_millis(15),
        tupdate: Duration::from_millis(15),
        alpha: 0.125,
        beta: 1.25,
    }
}

const KEYS: &str =
    "rate, trace, delay, buffer, qdisc, red_min_th, red_max_th, red_max_p, red_weight, loss";

/// Parses `spec` for the option `field` (e.g. "--uplink"); errors name the field, the
/// item, and what is allowed.
pub fn parse_direction(field: &str, spec: &str) -> Result<DirectionConfig, EmuError> {
    let bad = |key: &str, value: &str, allowed: &str| {
        EmuError::Config(format!("{field}: {key} \"{value}\" is not {allowed}"))
    };
    let mut cfg = DirectionConfig::default();
    let mut red = red_defaults();
    let mut red_asked = false;
    for (i, item) in spec.split(',').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None if i == 0 => (if parse_rate(item).is_ok() { "rate" } else { "trace" }, item),
            None => {
                return Err(EmuError::Config(format!(
                    "{field}: \"{item}\" is not key=value (keys: {KEYS})"
                )))
            }
        };
        match key {
            "rate" => {
                let r = parse_rate(value)
                    .map_err(|e| EmuError::Config(format!("{field}: rate {e}")))?;
                if r.bps() == 0 {
                    return Err(bad("rate", value, "a positive rate"));
                }
                cfg.rate = Some(LinkRate::Constant(r));
            }
            "trace" => {
                let t = Trace::load(Path::new(value))
                    .map_err(|e| EmuError::Config(format!("{field}: {e}")))?;
                cfg.rate = Some(LinkRate::Trace(Arc::new(t)));
            }
            "delay" => {
                cfg.delay = parse_duration(value)
                    .map_err(|e| EmuError::Config(format!("{field}: delay {e}")))?;
                if cfg.delay.as_nanos() > 10_000_000_000 {
                    return Err(bad("delay", value, "at most 10s"));
                }
            }
            "buffer" => {
                cfg.buffer = if let Some(n) = value.strip_suffix("pkt") {
                    match n.trim().parse::<u64>() {
                        Ok(n) if n > 0 => Buffer::Packets(n),
                        _ => return Err(bad("buffer", value, "a positive packet count such as \"100pkt\" or a size such as \"120KB\"")),
                    }
                } else {
                    match parse_bytes(value) {
                        Ok(b) if b >= 1500 => Buffer::Bytes(b),
                        Ok(_) => return Err(bad("buffer", value, "at least 1500B (one packet)")),
                        Err(e) => {
                            return Err(EmuError::Config(format!(
                                "{field}: buffer {e}, or a packet count such as \"100pkt\""
                            )))
                        }
                    }
                }
            }
            "qdisc" => match value {
                "droptail" => cfg.qdisc = Qdisc::DropTail,
                "red" => red_asked = true,
                "pie" => cfg.qdisc = Qdisc::Pie(pie_defaults()),
                _ => return Err(bad("qdisc", value, "one of: droptail, red, pie")),
            },
            "red_min_th" | "red_max_th" | "red_max_p" | "red_weight" => {
                let v: f64 = value
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| bad(key, value, "a non-negative number"))?;
                match key {
                    "red_min_th" => red.min_th = v,
                    "red_max_th" => red.max_th = v,
                    "red_max_p" => red.max_p = v,
                    _ => red.weight = v,
                }
                red_asked = true;
            }
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
    if red_asked {
        if red.min_th >= red.max_th {
            return Err(EmuError::Config(format!(
                "{field}: red_min_th {} must be below red_max_th {}",
                red.min_th, red.max_th
            )));
        }
        let in_unit = |v: f64| v > 0.0 && v <= 1.0;
        if !in_unit(red.max_p) || !in_unit(red.weight) {
            return Err(EmuError::Config(format!(
                "{field}: red_max_p and red_weight must be in (0, 1]"
            )));
        }
        cfg.qdisc = Qdisc::Red(red);
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_units::Rate;

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
    }

    #[test]
    fn reads_a_shared_trace_verbatim() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/12mbps.trace");
        if !Path::new(path).exists() {
            eprintln!("skipped: {path} not present");
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
        let m = msg("rate=10MBps");
        assert!(m.contains("--uplink: rate") && m.contains("Mbps"), "{m}");
        let m = msg("10Mbps,delay=soon");
        assert!(m.contains("delay") && m.contains("soon"), "{m}");
        let m = msg("10Mbps,buffer=0pkt");
        assert!(m.contains("buffer \"0pkt\""), "{m}");
        let m = msg("10Mbps,loss=1.5");
        assert!(m.contains("loss \"1.5\"") && m.contains("between 0 and 1"), "{m}");
        let m = msg("10Mbps,qdisc=codel");
        assert!(m.contains("droptail, red, pie"), "{m}");
        let m = msg("10Mbps,colour=red");
        assert!(m.contains("unknown key \"colour\""), "{m}");
        let m = msg("10Mbps,red_min_th=20,red_max_th=10");
        assert!(m.contains("red_min_th"), "{m}");
        let m = msg("rate=0Mbps");
        assert!(m.contains("positive"), "{m}");
    }
}
